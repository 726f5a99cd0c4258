#!/bin/sh
# Regenerates every mesh in this directory from its .geo source (gmsh 4.15.2, `pip install gmsh`).
# Run from the repository root or from meshes/: sh meshes/build.sh
set -e
cd "$(dirname "$0")"
gmsh beam.geo -3 -setnumber h 0.005 -o beam_1.msh
gmsh beam.geo -3 -setnumber h 0.0025 -o beam_2.msh
gmsh beam.geo -3 -setnumber h 0.0014 -o beam_3.msh
gmsh trunk.geo -3 -o trunk.msh      # profile measured by measure_trunk.py from the published trunk.vtk
gmsh finger.geo -3 -o finger.msh    # profile measured by measure_finger.py from the published finger.vtk
gmsh servo_finger.geo -3 -o servo_finger.msh
gmsh pneumatic.geo -3 -o pneumatic.msh    # shape measured by measure_pneunet.py from the published pneunetCut.vtk
python3 incline_cube.py   # structured cube on the 20° incline (no gmsh needed)
python3 soft_block.py     # structured block of the mixed rigid/soft scenes (no gmsh needed)
python3 gripper_pair.py     # both servo fingers as one mesh (meshio + numpy; after servo_finger.msh)
