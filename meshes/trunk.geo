// Trunk: the SoftRobots Trunk's shape, in metres (SI), rebuilt from measurements of the published
// mesh (`trunk.vtk`, not in the repository; meshes/measure_trunk.py prints its rings and
// cross-sections): a cone along +z, radius 13 mm at the base (z = 0) and 5 mm at the tip
// (z = 0.195), cut by ten circumferential V grooves. Groove i has its apex (a circle) at
// z = 24 + 17.5 i mm, radius 2.5 mm (i = 0..3) or 2 mm (i = 4..9); its two flanks make the angle
// th[i] with the cross-section plane (20, 25, 30, 30, 30, 40, 40, 40, 40, 40 degrees) and meet the
// cone at the rims zl, zu below. No channels: the 8 cables are paths in the material (their
// points lie on the groove walls, up to 0.9 mm outside the faceted surface: scenes/trunk.toml
// sets embed_tolerance).
//
// The published mesh was itself made by gmsh from such a revolved profile, with its circles split
// at 0 and 90 degrees and about 5.75 mm elements (14 nodes on the rim at z = 20.5 mm, 7 at
// 184 mm, 4 on each groove apex); this file rebuilds the profile and meshes it the same way: two
// revolutions (0..90 and 90..360 degrees) glued together, element size h, at least 4 nodes per
// full circle, so each groove neck is a 4-node square as there. At this size the static sag
// depends on the tetrahedra around the necks (other gmsh 2D/3D algorithm choices for the same
// geometry and h move the tip by 1-6 %); MeshAdapt 2D + Frontal 3D gives 704 nodes / 2,002
// tetrahedra against the published 709 / 1,972 (tests/trunk_mesh.rs compares the sags).
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.00575, Name "element size (m)"} ];

L = 0.195;  R0 = 0.013;  R1 = 0.005;
za[] = {0.024, 0.0415, 0.059, 0.0765, 0.094, 0.1115, 0.129, 0.1465, 0.164, 0.1815};
ra[] = {0.0025, 0.0025, 0.0025, 0.0025, 0.002, 0.002, 0.002, 0.002, 0.002, 0.002};
th[] = {20, 25, 30, 30, 30, 40, 40, 40, 40, 40};
k = (R0 - R1) / L;   // the cone's radius is R0 - k z

// The profile in the x-z half plane (x = radius), base centre first, counter-clockwise.
np = 0;
Point(newp) = {0, 0, 0};        pts[np] = newp - 1; np++;
Point(newp) = {R0, 0, 0};       pts[np] = newp - 1; np++;
For i In {0 : #za[] - 1}
  t = Tan(th[i] * Pi / 180);
  zl = (za[i] - t * (R0 - ra[i])) / (1 - k * t);   // lower flank z = za - t (r - ra) meets r = R0 - k z
  zu = (za[i] + t * (R0 - ra[i])) / (1 + k * t);   // upper flank z = za + t (r - ra)
  Point(newp) = {R0 - k * zl, 0, zl}; pts[np] = newp - 1; np++;
  Point(newp) = {ra[i], 0, za[i]};    pts[np] = newp - 1; np++;
  Point(newp) = {R0 - k * zu, 0, zu}; pts[np] = newp - 1; np++;
EndFor
Point(newp) = {R1, 0, L};       pts[np] = newp - 1; np++;
Point(newp) = {0, 0, L};        pts[np] = newp - 1; np++;
For i In {0 : np - 1}
  Line(newl) = {pts[i], pts[(i + 1) % np]}; lns[i] = newl - 1;
EndFor
Curve Loop(1) = {lns[]};
Plane Surface(1) = {1};
a[] = Extrude {{0, 0, 1}, {0, 0, 0}, Pi / 2} { Surface{1}; };
b[] = Extrude {{0, 0, 1}, {0, 0, 0}, 3 * Pi / 2} { Surface{a[0]}; };
Coherence;

eps = 1e-5;
base() = Surface In BoundingBox{-R0 - eps, -R0 - eps, -eps, R0 + eps, R0 + eps, eps};
Physical Surface("base", 1) = {base()};
Physical Volume("body", 2) = {Volume{:}};

Mesh.MeshSizeMin = h;
Mesh.MeshSizeMax = h;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;
Mesh.MeshSizeExtendFromBoundary = 1;
Mesh.MinimumCircleNodes = 4;
Mesh.Algorithm = 1;     // MeshAdapt
Mesh.Algorithm3D = 4;   // Frontal
Mesh.Optimize = 1;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;
Mesh.SaveAll = 0;
General.NumThreads = 1;
