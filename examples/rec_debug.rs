use diffsoro::diff::{Recorder, Parameter};
use diffsoro::scene::Scene;
use diffsoro::control::{ControlOptions, InverseController};
fn main() -> diffsoro::Result<()> {
    let mut scene = Scene::load(std::path::Path::new("scenes/trunk.toml"), &[])?;
    let l = [0.284, 0.071, 0.075, 0.276, 0.227, 0.043, 0.005, 0.210];
    let mut ctl = InverseController::new(&scene, "tip", ControlOptions::default())?;
    let mut rec = Recorder::new(&scene)?;
    let mut state = scene.initial_state();
    for n in 0..150 {
        let s = ((n as f64) / 60.0).min(1.0);
        for (i, v) in l.iter().enumerate() { Parameter::parse(&scene, &format!("actuator:c{}", i+1))?.set(&mut scene, s * v)?; }
        let (_, record) = rec.step(&scene, &mut state)?;
        let lin = ctl.linearise(&scene, &record, &state)?;
        if n % 10 == 0 { println!("{n} K {}", lin.stiffness_factored); }
        rec.recycle(record);
        if n % 20 == 0 { println!("{n} ok {:?}", state.actuator_forces[0]); }
    }
    Ok(())
}
