// Cable-driven finger: the SoftRobots CableGripper finger's shape, in metres (SI), rebuilt from
// measurements of the published mesh (`finger.vtk`, not in the repository; meshes/measure_finger.py
// prints its side profile and cross-sections). Side profile in the x-y plane, extruded along z in
// [0, 0.015]: length x in [-0.10337, 0] (clamped at x = 0), height y in [0, 0.015], a thinner
// attachment block x in [-0.010, 0], y in [0, 0.005], and the tip rounded with radius 10 mm about
// (-93.37, 5) mm, faceted as on the published mesh by two chords through (-100.44, 12.07) mm
// (the published mesh holds 0.4 % more volume there: 18,508.7 against 18,441 mm^3). Two V-shaped flexure
// notches cut through the whole width, as on the published finger: apex at y = 0.005 and
// x = -70.69 / -40.35 mm, 15.35 mm wide at the top face y = 0.015. The cable's points
// (finger/cable.json: y = 12.5 mm, z = 2.5 and 12.5 mm, x in [-85.5, -17.5] mm) all lie in the
// material, at least 0.8 mm from a notch flank; between x = -77.5 and -62.5 and between -47.5 and
// -32.5 mm the cable crosses a notch in the air, as on the published mesh.
//
// The published mesh is coarse (158 nodes / 389 tetrahedra, about 7.5 mm elements, one element
// across the 5 mm necks under the notches), and at that size the sag under gravity depends on the
// tetrahedra at the necks (the same shape meshed at h = 3.5 mm sags about a third more). This file meshes at
// h = 8 mm with Frontal-Delaunay 2D + HXT 3D, which gives 165 nodes and a tip displacement under
// gravity within 2 % of the published mesh's (tests/finger_mesh.rs).
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.008, Name "element size (m)"} ];

mm = 0.001;
W = 15 * mm;          // width along z
z0 = -1 * mm;         // the notch wedges reach past both side faces
z1 = W + 1 * mm;

// Outer profile (counter-clockwise in x-y).
Point(1) = {0, 0, 0};
Point(2) = {0, 5 * mm, 0};
Point(3) = {-10 * mm, 5 * mm, 0};
Point(4) = {-17.67 * mm, 15 * mm, 0};
Point(5) = {-93.37 * mm, 15 * mm, 0};
Point(6) = {-100.44 * mm, 12.07 * mm, 0};
Point(7) = {-103.37 * mm, 5 * mm, 0};
Point(8) = {-103.37 * mm, 0, 0};
For i In {1:7}
  Line(i) = {i, i + 1};
EndFor
Line(8) = {8, 1};
Curve Loop(1) = {1:8};
Plane Surface(1) = {1};
outer[] = Extrude {0, 0, W} { Surface{1}; };

// Notches: V wedges (apex at y = 5 mm, 15.35 mm wide at y = 15 mm), extended above the top face.
For k In {0:1}
  xc = (k == 0) ? -70.69 * mm : -40.35 * mm;   // apex x of each notch
  p0 = newp;
  Point(p0) = {xc, 5 * mm, z0};
  Point(p0 + 1) = {xc + 7.675 * mm * 1.2, 17 * mm, z0};
  Point(p0 + 2) = {xc - 7.675 * mm * 1.2, 17 * mm, z0};
  l0 = newl;
  Line(l0) = {p0, p0 + 1};
  Line(l0 + 1) = {p0 + 1, p0 + 2};
  Line(l0 + 2) = {p0 + 2, p0};
  cl = newcl;
  Curve Loop(cl) = {l0, l0 + 1, l0 + 2};
  s = news;
  Plane Surface(s) = {cl};
  w[] = Extrude {0, 0, z1 - z0} { Surface{s}; };
  wedge[k] = w[1];
EndFor
BooleanDifference(100) = { Volume{outer[1]}; Delete; }{ Volume{wedge[0], wedge[1]}; Delete; };

eps = 1e-5;
clamp() = Surface In BoundingBox{-eps, -eps, -eps, eps, 5 * mm + eps, W + eps};
Physical Surface("clamp", 1) = {clamp()};
Physical Volume("body", 2) = {100};

Mesh.MeshSizeMin = h;
Mesh.MeshSizeMax = h;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.Algorithm = 6;     // Frontal-Delaunay
Mesh.Algorithm3D = 10;  // HXT (deterministic with one thread)
Mesh.Optimize = 1;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;
Mesh.SaveAll = 0;
General.NumThreads = 1;
