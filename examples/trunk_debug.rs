use diffsoro::control::{ControlOptions, InverseController, QpSettings, default_qp_solver};
use diffsoro::diff::Recorder;
use diffsoro::math::Vec3;
use diffsoro::scene::Scene;
fn main() -> diffsoro::Result<()> {
    let mut scene = Scene::load(std::path::Path::new("scenes/trunk.toml"), &[])?;
    let mut ctl = InverseController::new(&scene, "tip", ControlOptions { max_change: std::env::args().nth(1).map_or(0.02, |s| s.parse().unwrap()), regularisation: std::env::args().nth(2).map_or(1e-3, |s| s.parse().unwrap()), force_cap: 0.3 })?;
    let mut rec = Recorder::new(&scene)?;
    let mut state = scene.initial_state();
    let mut solver = default_qp_solver(QpSettings::default());
    let target = Vec3::new(-0.00034595415824136184, -0.022855663424786486, 0.19226900222084797);
    for n in 0..150 {
        let (_, record) = rec.step(&scene, &mut state)?;
        let lin = ctl.linearise(&scene, &record, &state)?;
        let st = ctl.update(&lin, target, solver.as_mut())?;
        if n % 10 == 0 { println!("{n} e={:.2}mm p={:?} eq={:?} K={} {:?} λ={:.3?}", (lin.position - target).norm()*1e3, lin.position.as_slice(), lin.predicted.as_slice(), lin.shift, st, ctl.actuation()); }
        ctl.apply(&mut scene)?;
        rec.recycle(record);
    }
    Ok(())
}
