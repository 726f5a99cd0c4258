// Cantilever beam 100 x 10 x 10 mm, in metres (SI).
// x in [0, 0.1], y and z in [-0.005, 0.005].
// Element size h (m) is set on the command line: gmsh beam.geo -setnumber h 0.005 ...
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.005, Name "element size (m)"} ];

Box(1) = {0, -0.005, -0.005, 0.1, 0.01, 0.01};

eps = 1e-5;
clamp() = Surface In BoundingBox{-eps, -0.005 - eps, -0.005 - eps, eps, 0.005 + eps, 0.005 + eps};
tip() = Surface In BoundingBox{0.1 - eps, -0.005 - eps, -0.005 - eps, 0.1 + eps, 0.005 + eps, 0.005 + eps};

Physical Surface("clamp", 1) = {clamp()};
Physical Surface("tip", 2) = {tip()};
Physical Volume("body", 3) = {1};

Mesh.MeshSizeMin = h;
Mesh.MeshSizeMax = h;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.Algorithm = 6;      // Frontal-Delaunay 2D
Mesh.Algorithm3D = 1;    // Delaunay 3D
Mesh.Optimize = 1;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;
Mesh.SaveAll = 0;
General.NumThreads = 1;
