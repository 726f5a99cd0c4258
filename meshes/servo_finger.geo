// Servo gripper finger: a hollow Fin-Ray-like compliant finger (inspired by the SoftRobots
// SoftFingerDesign finger of Navez et al., RoboSoft 2024: 40 x 60 x 20 mm, Filaflex, on an SG90 horn).
// In metres (SI). Side profile in the x-y plane, extruded along z in [0, 0.020]:
//   back wall   x in [0, 0.008],     y in [0, 0.060]  (thick, carries the servo horn foot)
//   front wall  x in [0.036, 0.040], y in [0, 0.060]  (thin contact side, fixed foot)
//   tip cap     y in [0.055, 0.060]
//   4 inclined ribs (3 mm thick) joining the walls, Fin-Ray style
//   horn foot   x in [0, 0.008],     y in [-0.006, 0]  -> its face y = -0.006 is group "horn"
//   fixed foot  x in [0.032, 0.040], y in [-0.006, 0]  -> its face y = -0.006 is group "fixed"
// The hollow between the walls is open at the bottom (y = 0), so turning the horn foot about the
// servo axis while the other foot is fixed curls the finger.
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.004, Name "element size (m)"} ];

mm = 0.001;
T = 20 * mm;
Rectangle(1) = {0, -6 * mm, 0, 8 * mm, 66 * mm};          // back wall + horn foot
Rectangle(2) = {36 * mm, 0, 0, 4 * mm, 60 * mm};          // front wall
Rectangle(3) = {32 * mm, -6 * mm, 0, 8 * mm, 6 * mm};     // fixed foot
Rectangle(4) = {0, 55 * mm, 0, 40 * mm, 5 * mm};          // tip cap
// Ribs: parallelograms from the back wall (higher) down to the front wall (lower).
For k In {0:3}
  yb = (10 + 11 * k) * mm;    // rib bottom at the front wall
  yt = yb + 8 * mm;           // rib bottom at the back wall
  p = newp;
  Point(p) = {7 * mm, yt, 0};
  Point(p + 1) = {37 * mm, yb, 0};
  Point(p + 2) = {37 * mm, yb + 3 * mm, 0};
  Point(p + 3) = {7 * mm, yt + 3 * mm, 0};
  l = newl;
  Line(l) = {p, p + 1};
  Line(l + 1) = {p + 1, p + 2};
  Line(l + 2) = {p + 2, p + 3};
  Line(l + 3) = {p + 3, p};
  c = newcl;
  Curve Loop(c) = {l, l + 1, l + 2, l + 3};
  s = news;
  Plane Surface(s) = {c};
  rib[k] = s;
EndFor
BooleanUnion(50) = { Surface{1}; Delete; }{ Surface{2, 3, 4, rib[]}; Delete; };
v[] = Extrude {0, 0, T} { Surface{50}; };

eps = 1e-5;
horn() = Surface In BoundingBox{-eps, -6 * mm - eps, -eps, 8 * mm + eps, -6 * mm + eps, T + eps};
fixed() = Surface In BoundingBox{32 * mm - eps, -6 * mm - eps, -eps, 40 * mm + eps, -6 * mm + eps, T + eps};
Physical Surface("horn", 1) = {horn()};
Physical Surface("fixed", 2) = {fixed()};
Physical Volume("body", 3) = {v[1]};

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
