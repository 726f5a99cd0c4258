// Trunk: solid tapered silicone trunk, in metres (SI).
// Truncated cone along +z from the base at z = 0 (radius 13 mm) to the tip at z = 0.195 (radius 5 mm),
// the size and taper of the published SOFA SoftRobots Trunk. Its 8 cables are paths embedded in the
// material (radius 10 mm -> 3.5 mm, at least 1.9 mm inside the surface), so no channels are meshed.
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.0065, Name "element size (m)"} ];

L = 0.195;
Cone(1) = {0, 0, 0, 0, 0, L, 0.013, 0.005};

eps = 1e-5;
base() = Surface In BoundingBox{-0.014, -0.014, -eps, 0.014, 0.014, eps};
Physical Surface("base", 1) = {base()};
Physical Volume("body", 2) = {1};

Mesh.MeshSizeMin = 0.5 * h;
Mesh.MeshSizeMax = h;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 12;   // elements per 2*pi of curvature on the round faces
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.Algorithm = 6;
Mesh.Algorithm3D = 1;
Mesh.Optimize = 1;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;
Mesh.SaveAll = 0;
General.NumThreads = 1;
