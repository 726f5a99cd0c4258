// Cable-driven finger (after the SOFA SoftRobots CableGripper finger), in metres (SI).
// Side profile in the x-y plane, extruded along z in [0, 0.015]:
//   length x in [-0.10337, 0] (clamped at x = 0), height y in [0, 0.015], a thinner attachment block
//   x in [-0.010, 0], y in [0, 0.005], and a rounded (chamfered) tip.
// The two V-shaped flexure notches of the published finger (apex at y = 0.005) are cut only through the
// middle slot z in [0.004, 0.011], so the cable path (y = 0.0125, z = 0.0025 and 0.0125, x in
// [-0.0855, -0.0175]) runs entirely inside the material (through the 4 mm side walls at the notches).
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.0035, Name "element size (m)"} ];

mm = 0.001;
W = 15 * mm;          // width along z
z0 = 4 * mm;          // slot (notch) z-range
z1 = 11 * mm;

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
Mesh.Algorithm = 6;
Mesh.Algorithm3D = 1;
Mesh.Optimize = 1;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;
Mesh.SaveAll = 0;
General.NumThreads = 1;
