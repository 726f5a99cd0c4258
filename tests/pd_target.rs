//! Derivatives with respect to a PD robot's target (`target:ROBOT`): a constant
//! offset added to the target over the run, which moves the input before the effort clamp
//! by kp per unit (docs/derivatives.md). On the double pendulum of `urdf/double_pendulum.urdf`
//! held by a PD, without contact: the forward sensitivities of `simulate` against central
//! differences of two runs with `--set robot.arm.target=[…]` (the shoulder's continuous
//! joint stored as (cos, sin), so its offset turns both), a moving target (`target_path`,
//! every waypoint offset), the reverse sweep's gradient against the forward sensitivities, a
//! joint held at its effort limit (no derivative), and the errors.

use crate::cli_support;

use serde_json::Value;

/// The double pendulum hanging from a fixed base, a PD holding it near `target` (a line
/// `target = [...]` or `target_path = [...]`), kp and kd per joint: the scene file's path, in
/// a scratch folder that lives as long as the returned guard.
fn pendulum(
    name: &str,
    kp: [f64; 2],
    kd: [f64; 2],
    target: &str,
) -> (cli_support::Scratch, String) {
    let dir = cli_support::scratch(name);
    let urdf = cli_support::root().join("urdf/double_pendulum.urdf");
    let text = format!(
        r#"
[simulation]
dt = 0.005
steps = 30
gravity = [0.0, 0.0, -9.81]

[[robot]]
name = "arm"
urdf = "{}"
base = "fixed"
q = [0.9950041652780258, 0.09983341664682815, -0.2]
v = [0.1, 0.5]
kp = {kp:?}
kd = {kd:?}
{target}
"#,
        urdf.display()
    );
    let path = dir.join("pendulum.toml");
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap().to_string();
    (dir, path)
}

/// The final-state JSON of `simulate` with `args`.
fn json(args: &[&str]) -> Value {
    let out = cli_support::run(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The arm's final (q, v) with the override `set`.
fn final_arm(scene: &str, set: &str) -> (Vec<f64>, Vec<f64>) {
    let v = json(&["simulate", scene, "--set", set]);
    let arm = &v["robots"][0];
    let list = |k: &str| -> Vec<f64> {
        arm[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    (list("q"), list("v"))
}

/// The tangent (shoulder angle, elbow angle) of a final configuration `q` from `base`.
fn tangent(base: &[f64], q: &[f64]) -> [f64; 2] {
    let shoulder = (base[0] * q[1] - base[1] * q[0]).atan2(base[0] * q[0] + base[1] * q[1]);
    [shoulder, q[2] - base[2]]
}

/// A target line with the shoulder at `a` (rad) and the elbow at `b`.
fn target_line(a: f64, b: f64) -> String {
    format!("[{}, {}, {b}]", a.cos(), a.sin())
}

/// Central differences of the final (q, v) in the target's component `k` (shoulder 0, elbow
/// 1) at `(a, b)`, step `eps`, with `line(a, b)` the TOML value of the target key `key`.
fn differences(
    scene: &str,
    key: &str,
    line: &dyn Fn(f64, f64) -> String,
    (a, b): (f64, f64),
    k: usize,
    eps: f64,
) -> ([f64; 2], [f64; 2]) {
    let at = |s: f64| {
        let (da, db) = if k == 0 { (s, 0.0) } else { (0.0, s) };
        final_arm(scene, &format!("robot.arm.{key}={}", line(a + da, b + db)))
    };
    let (base, _) = final_arm(scene, &format!("robot.arm.{key}={}", line(a, b)));
    let ((qp, vp), (qm, vm)) = (at(eps), at(-eps));
    let (tp, tm) = (tangent(&base, &qp), tangent(&base, &qm));
    let dq = [0, 1].map(|r| (tp[r] - tm[r]) / (2.0 * eps));
    let dv = [0, 1].map(|r| (vp[r] - vm[r]) / (2.0 * eps));
    (dq, dv)
}

/// The analytic sensitivities `rigid_sensitivities[name].arm` as ([dq], [dv]).
fn analytic(v: &Value, name: &str) -> ([f64; 2], [f64; 2]) {
    let s = &v["rigid_sensitivities"][name]["arm"];
    let at = |key: &str| [0, 1].map(|r| s[key][r].as_f64().unwrap());
    (at("q"), at("v"))
}

/// Checks `got` against `want` to 1e-6 of the largest entry.
fn close(what: &str, got: ([f64; 2], [f64; 2]), want: ([f64; 2], [f64; 2])) {
    let all = |x: ([f64; 2], [f64; 2])| [x.0[0], x.0[1], x.1[0], x.1[1]];
    let (g, w) = (all(got), all(want));
    let scale = w.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(scale > 1e-3, "{what}: a trivial derivative {w:?}");
    for r in 0..4 {
        assert!(
            (g[r] - w[r]).abs() <= 1e-6 * scale,
            "{what}, entry {r}: analytic {g:?} vs differences {w:?}"
        );
    }
}

#[test]
fn the_target_sensitivities_of_a_pd_pendulum_are_differences_of_two_runs() {
    let (a, b) = (0.3, 0.1);
    let (_scene_dir, scene) = pendulum(
        "fixed",
        [40.0, 20.0],
        [2.0, 1.0],
        &format!("target = {}", target_line(a, b)),
    );
    let v = json(&["simulate", &scene, "--sensitivity", "target:arm"]);
    let names: Vec<&String> = v["rigid_sensitivities"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(names, ["target:arm[0]", "target:arm[1]"]);
    for k in 0..2 {
        let name = format!("target:arm[{k}]");
        let fd = differences(&scene, "target", &|a, b| target_line(a, b), (a, b), k, 1e-5);
        close(&name, analytic(&v, &name), fd);
        // kp_k times the constant input's, column by column.
        let tau = json(&[
            "simulate",
            &scene,
            "--sensitivity",
            &format!("tau:arm[{k}]"),
        ]);
        let (tq, tv) = analytic(&tau, &format!("tau:arm[{k}]"));
        let kp = [40.0, 20.0][k];
        close(
            &name,
            analytic(&v, &name),
            (tq.map(|x| kp * x), tv.map(|x| kp * x)),
        );
    }
}

/// A moving target: `target:` is one constant offset added to every waypoint.
#[test]
fn a_moving_targets_sensitivity_offsets_every_waypoint() {
    let path = |a: f64, b: f64| {
        format!(
            "[[0.0, {}, {}, {b}], [0.1, {}, {}, {}]]",
            a.cos(),
            a.sin(),
            (a + 0.4).cos(),
            (a + 0.4).sin(),
            b - 0.3
        )
    };
    let (a, b) = (0.3, 0.1);
    let (_scene_dir, scene) = pendulum(
        "path",
        [40.0, 20.0],
        [2.0, 1.0],
        &format!("target_path = {}", path(a, b)),
    );
    let v = json(&[
        "simulate",
        &scene,
        "--sensitivity",
        "target:arm[0],target:arm[1]",
    ]);
    for k in 0..2 {
        let name = format!("target:arm[{k}]");
        let fd = differences(&scene, "target_path", &path, (a, b), k, 1e-5);
        close(&name, analytic(&v, &name), fd);
    }
}

/// The reverse sweep (`--gradient-of`) gives the forward sensitivities' entries.
#[test]
fn the_target_gradient_by_the_reverse_sweep_is_the_forward_one() {
    let (_scene_dir, scene) = pendulum(
        "gradient",
        [40.0, 20.0],
        [2.0, 1.0],
        &format!("target = {}", target_line(0.3, 0.1)),
    );
    let names = "target:arm,tau:arm[1],q:arm[0]";
    let forward = json(&["simulate", &scene, "--sensitivity", names]);
    for (loss, key, r) in [("q:arm[1]", "q", 1), ("v:arm[0]", "v", 0)] {
        let reverse = json(&[
            "simulate",
            &scene,
            "--sensitivity",
            names,
            "--gradient-of",
            loss,
        ]);
        for name in ["target:arm[0]", "target:arm[1]", "tau:arm[1]", "q:arm[0]"] {
            let want = forward["rigid_sensitivities"][name]["arm"][key][r]
                .as_f64()
                .unwrap();
            let got = reverse["gradient"][name].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1e-10 * want.abs().max(1e-3),
                "d{loss}/d{name}: reverse {got}, forward {want}"
            );
        }
    }
}

/// The elbow's PD asks for far more than its 50 N·m effort limit throughout (kp 1000 N·m/rad,
/// 2 rad away): its input is the limit whatever the target, so the derivative with respect to
/// the elbow's target is zero, exactly, and the differences agree; the shoulder's is not.
#[test]
fn a_joint_held_at_its_effort_limit_has_no_target_derivative() {
    let (a, b) = (0.3, 2.0);
    let (_scene_dir, scene) = pendulum(
        "clamped",
        [40.0, 1000.0],
        [2.0, 1.0],
        &format!("target = {}", target_line(a, b)),
    );
    let args = [
        "simulate",
        &scene,
        "--steps",
        "5",
        "--sensitivity",
        "target:arm",
    ];
    let v = json(&args);
    let (dq, dv) = analytic(&v, "target:arm[1]");
    assert!(dq.iter().chain(&dv).all(|x| *x == 0.0), "{dq:?} {dv:?}");
    let shoulder = analytic(&v, "target:arm[0]");
    assert!(shoulder.1[0].abs() > 1e-3, "{shoulder:?}");
    // The differences of two 5-step runs.
    let (_five_dir, five) = pendulum(
        "clamped5",
        [40.0, 1000.0],
        [2.0, 1.0],
        &format!("target = {}", target_line(a, b)),
    );
    let text = std::fs::read_to_string(&five)
        .unwrap()
        .replace("steps = 30", "steps = 5");
    std::fs::write(&five, text).unwrap();
    let (fq, fv) = differences(&five, "target", &|a, b| target_line(a, b), (a, b), 1, 1e-5);
    assert!(
        fq.iter().chain(&fv).all(|x| x.abs() < 1e-9),
        "{fq:?} {fv:?}"
    );
}

/// One-line errors name the parameter: a torque-driven robot, an unknown robot, a component
/// out of range.
#[test]
fn target_errors_name_the_parameter() {
    let (_torque_dir, torque) = pendulum("torque", [1.0, 1.0], [0.0, 0.0], "");
    let text = std::fs::read_to_string(&torque)
        .unwrap()
        .replace("kp = [1.0, 1.0]", "torque = [0.0, 0.5]")
        .replace("kd = [0.0, 0.0]", "");
    std::fs::write(&torque, text).unwrap();
    let (_pd_dir, pd) = pendulum(
        "errors",
        [40.0, 20.0],
        [2.0, 1.0],
        "target = [1.0, 0.0, 0.0]",
    );
    for (scene, name, want) in [
        (&torque, "target:arm", "no PD input"),
        (&pd, "target:leg[0]", "no robot `leg`"),
        (&pd, "target:arm[2]", "component 2 is out of range (0 to 1)"),
    ] {
        let out = cli_support::run(&["simulate", scene, "--steps", "1", "--sensitivity", name]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}: {err}");
        assert!(
            err.contains(&format!("`{name}`")) && err.contains(want),
            "{name}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

/// `Parameter::parse(scene, "target:ROBOT[k]")` reads coordinate k of the target (rad, the
/// shoulder's angle from its (cos, sin)), and setting it moves every waypoint of a moving
/// target by the same offset (the semantics the derivative is taken in).
#[test]
fn the_target_parameter_reads_and_offsets_the_waypoints() {
    use diffsoro::diff::Parameter;
    use diffsoro::scene::{RigidInput, Scene};
    let line = "target_path = [[0.0, 0.9950041652780258, 0.09983341664682815, 0.1], [0.1, 1.0, 0.0, -0.2]]";
    let (_path_dir, path) = pendulum("value", [40.0, 20.0], [2.0, 1.0], line);
    let mut scene = Scene::load(std::path::Path::new(&path), &[]).unwrap();
    let (shoulder, elbow) = (
        Parameter::parse(&scene, "target:arm[0]").unwrap(),
        Parameter::parse(&scene, "target:arm[1]").unwrap(),
    );
    assert_eq!(elbow.name(&scene), "target:arm[1]");
    // The last waypoint's coordinates.
    assert!(shoulder.value(&scene).abs() < 1e-15);
    assert_eq!(elbow.value(&scene), -0.2);
    elbow.set(&mut scene, 0.3).unwrap();
    shoulder.set(&mut scene, 0.25).unwrap();
    let RigidInput::Pd { path, .. } = &scene.rigid.systems[0].input else {
        panic!("a PD robot");
    };
    assert!((path[0].1[2] - 0.6).abs() < 1e-15, "{path:?}");
    assert!((path[1].1[2] - 0.3).abs() < 1e-15, "{path:?}");
    let angle = |q: &[f64]| q[1].atan2(q[0]);
    assert!((angle(&path[0].1) - 0.35).abs() < 1e-12, "{path:?}");
    assert!((angle(&path[1].1) - 0.25).abs() < 1e-12, "{path:?}");
    assert!((shoulder.value(&scene) - 0.25).abs() < 1e-12);
}
