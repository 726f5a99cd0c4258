//! The `dynamics` command against its contract (docs/cli.md), on the double pendulum whose
//! mass matrix is known in closed form.

use std::process::Command;

use crate::cli_support;

use serde_json::Value;

/// `diffsoro dynamics` of the double pendulum on the case `case` (JSON), written to a file of
/// a scratch folder of this call's own (tests run in parallel), removed with the run.
fn run(case: &str) -> std::process::Output {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = cli_support::scratch(&format!("case{call}"));
    let path = dir.join("case.json");
    std::fs::write(&path, case).unwrap();
    let urdf = cli_support::root().join("urdf/double_pendulum.urdf");
    Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .arg("dynamics")
        .arg(urdf)
        .arg("--case")
        .arg(path)
        .output()
        .unwrap()
}

#[test]
fn dynamics_prints_every_contract_field_with_consistent_shapes() {
    let (c, s) = (0.3f64.cos(), 0.3f64.sin());
    let out = run(&format!(
        r#"{{"q":[{c},{s},-0.2],"v":[0.1,0.5],"tau":[0.0,0.1],"a":[1.0,-1.0]}}"#
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["nq"], 3);
    assert_eq!(v["nv"], 2);
    for key in ["rnea", "aba"] {
        assert_eq!(v[key].as_array().unwrap().len(), 2, "{key}");
    }
    let matrix = |key: &str| -> Vec<Vec<f64>> { serde_json::from_value(v[key].clone()).unwrap() };
    for key in ["crba", "rnea_dq", "rnea_dv", "aba_dq", "aba_dv", "aba_dtau"] {
        let m = matrix(key);
        assert_eq!(m.len(), 2, "{key}");
        assert!(m.iter().all(|r| r.len() == 2), "{key}");
    }
    // crba and aba_dtau are inverse of each other and both symmetric (independent identity).
    let (m, minv) = (matrix("crba"), matrix("aba_dtau"));
    for i in 0..2 {
        assert_eq!(m[i][1 - i], m[1 - i][i]);
        for (j, identity) in [1.0, 0.0].iter().cycle().skip(i).take(2).enumerate() {
            let p: f64 = (0..2).map(|k| m[i][k] * minv[k][j]).sum();
            assert!((p - identity).abs() < 1e-10, "(M·M⁻¹)[{i}][{j}] = {p}");
        }
    }
}

#[test]
fn bad_cases_give_one_line_errors() {
    for (case, needle) in [
        (r#"{"q":[0.3],"v":[0.1,0.5],"tau":[0,0],"a":[0,0]}"#, "q"),
        (r#"{"q":[1,0,"#, "line"),
        (
            r#"{"q":[1,0,0],"v":[0,0],"tau":[0,0],"a":[0,0],"bse":"fixed"}"#,
            "bse",
        ),
    ] {
        let out = run(case);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{needle}: {err}");
    }
}
