// PneuNet-like pneumatic bending finger, in metres (SI).
// Length along +x from the clamped base face x = 0 to x = 0.073; width z in [-0.008, 0.008].
//   strain-limiting bottom layer  y in [0, 0.005], solid (thick and stiff: it does not stretch,
//                                 so inflating the chambers above bends the finger towards -y)
//   connector layer               y in [0.005, 0.010], carries the air channel
//   4 chamber blocks              y in [0.010, 0.022], 14 mm long, 3 mm gaps between them
// One closed internal cavity: 4 chambers (10 x 12.5 x 12 mm inside, 2 mm walls) joined by a channel
// (y in [0.0065, 0.0085], z in [-0.0015, 0.0015]). Its boundary is the physical surface "cavity".
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.003, Name "element size (m)"} ];

mm = 0.001;
N = 4;          // chambers
x0 = 4 * mm;    // first chamber block starts here
bl = 14 * mm;   // block length
gap = 3 * mm;
wall = 2 * mm;
L = x0 + N * bl + (N - 1) * gap + 4 * mm;   // = 0.073

Box(1) = {0, 0, -8 * mm, L, 10 * mm, 16 * mm};                 // bottom + connector layers
For k In {0:N-1}
  Box(2 + k) = {x0 + k * (bl + gap), 10 * mm, -8 * mm, bl, 12 * mm, 16 * mm};
EndFor
BooleanUnion(20) = { Volume{1}; Delete; }{ Volume{2:N+1}; Delete; };

// Cavity: chambers + channel.
For k In {0:N-1}
  Box(30 + k) = {x0 + k * (bl + gap) + wall, 6.5 * mm, -8 * mm + wall, bl - 2 * wall, 22 * mm - wall - 6.5 * mm, 16 * mm - 2 * wall};
EndFor
Box(29) = {x0 + wall, 6.5 * mm, -1.5 * mm, N * bl + (N - 1) * gap - 2 * wall, 2 * mm, 3 * mm};
BooleanUnion(40) = { Volume{29}; Delete; }{ Volume{30:30+N-1}; Delete; };
BooleanDifference(50) = { Volume{20}; Delete; }{ Volume{40}; Delete; };

eps = 1e-5;
cavity() = Surface In BoundingBox{x0 + wall - eps, 6.5 * mm - eps, -6 * mm - eps,
                                  L - 4 * mm - wall + eps, 20 * mm + eps, 6 * mm + eps};
clamp() = Surface In BoundingBox{-eps, -eps, -8 * mm - eps, eps, 10 * mm + eps, 8 * mm + eps};
// gmsh orients boundary triangles out of the volume, i.e. into the cavity; reverse them so that the
// cavity triangles point out of the cavity (into the material) and enclose a positive volume.
Reverse Surface{cavity()};
Physical Surface("cavity", 1) = {cavity()};
Physical Surface("clamp", 2) = {clamp()};
Physical Volume("body", 3) = {50};

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
