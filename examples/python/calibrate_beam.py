"""Calibration (job 1): fit the cantilever's Young's modulus to an observed final state.

An "experiment" is simulated at a known E = 3e5 Pa (`scenes/beam.toml`, 30 steps of 10 ms),
then E is fitted from a guess three times too small by Levenberg-Marquardt on the step
derivatives. Prints every iteration (progress callback), the fitted E (Pa) and its relative
error.

    python examples/python/calibrate_beam.py
"""

from pathlib import Path

import diffsoro

SCENE = Path(__file__).resolve().parents[2] / "scenes" / "beam.toml"

observed = diffsoro.Simulation(
    diffsoro.Scene.load(SCENE, overrides={"soft_body.beam.young_modulus": 3e5})
)
observed.run()  # the scene's 30 steps
scene = diffsoro.Scene.load(SCENE)
report = diffsoro.calibrate(
    scene,
    observed=observed.final_state(),
    params=["young_modulus:beam"],
    init={"young_modulus:beam": 1e5},
    progress=lambda e: print(f"simulation {e['evaluation']}: loss {e['loss']:.3e} m²")
    if "loss" in e else None,
)
e = report["params"]["young_modulus:beam"]
print(f"fitted E = {e:.6e} Pa in {report['iterations']} iterations "
      f"(relative error {abs(e / 3e5 - 1):.1e}), converged: {report['converged']}")
