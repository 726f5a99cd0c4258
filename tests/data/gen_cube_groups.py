"""Writes the unit cube, meshed by gmsh, in the four MSH variants (2.2/4.1 x ASCII/binary)
as cube_groups_v{22,41}_{ascii,binary}.msh, and prints gmsh's own counts of what the files
hold (the reference numbers of tests/msh_reader.rs).

Physical groups: volume "body" and volume 5 (unnamed, same volume: MSH 2.2 repeats each
tetrahedron for it), surfaces "clamp" (x = 0) and 7 (unnamed, x = 1), curve "edge" (lines,
dropped by the reader), point "tip" at (0, 0, 1). Run: python3 gen_cube_groups.py
"""
import json
import gmsh

gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("cube")
gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
gmsh.model.occ.synchronize()
gmsh.option.setNumber("Mesh.MeshSizeMax", 0.7)
gmsh.model.addPhysicalGroup(3, [1], name="body")
gmsh.model.addPhysicalGroup(3, [1], tag=5)
gmsh.model.addPhysicalGroup(2, [1], name="clamp")
gmsh.model.addPhysicalGroup(2, [2], tag=7)
gmsh.model.addPhysicalGroup(1, [1], name="edge")
gmsh.model.addPhysicalGroup(0, [1], name="tip")
gmsh.model.mesh.generate(3)
for version, binary, name in [(2.2, 0, "v22_ascii"), (2.2, 1, "v22_binary"),
                              (4.1, 0, "v41_ascii"), (4.1, 1, "v41_binary")]:
    gmsh.option.setNumber("Mesh.MshFileVersion", version)
    gmsh.option.setNumber("Mesh.Binary", binary)
    gmsh.write(f"cube_groups_{name}.msh")

# What the files hold, from gmsh's API: all nodes; the elements of physical entities.
tags, _, _ = gmsh.model.mesh.getNodes()
counts = {"nodes": len(tags)}
for dim, tag in gmsh.model.getPhysicalGroups():
    n = 0
    for entity in gmsh.model.getEntitiesForPhysicalGroup(dim, tag):
        _, element_tags, _ = gmsh.model.mesh.getElements(dim, entity)
        n += sum(len(t) for t in element_tags)
    counts[gmsh.model.getPhysicalName(dim, tag) or str(tag)] = n
tip_node = gmsh.model.mesh.getNodes(0, 1)[0]
counts["tip_node_coords"] = list(gmsh.model.mesh.getNode(int(tip_node[0]))[0])
print(json.dumps(counts))
gmsh.finalize()
