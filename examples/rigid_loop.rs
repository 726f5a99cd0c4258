//! A plain loop of one rigid-body algorithm, for side-by-side timings (user CPU time of many
//! calls, `time`) and instruction counts (valgrind) against `benches/pinocchio_reference.cpp`'s
//! loop mode: `cargo run --release --example rigid_loop -- urdf/ur5.urdf fixed crba 1000000`
//! (base `fixed` or `free`; algorithm `crba`, `crba_world`, `rnea`, `aba` or `factor`, the
//! mass factor of the rigid step). The state is the bench's (`benches/rigid.rs`).

use diffsoro::rigid::{Base, Data, MassFactor, aba, crba, crba_world, load_urdf, rnea};
use std::hint::black_box;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, file, base, alg, n] = &args[..] else {
        panic!("usage: rigid_loop URDF fixed|free crba|crba_world|rnea|aba|factor N");
    };
    let base = if base == "free" {
        Base::FreeFlyer
    } else {
        Base::Fixed
    };
    let m = load_urdf(std::path::Path::new(file), base).expect("model loads");
    let n: usize = n.parse().expect("N is a count");
    let seq = |k: usize, s: f64| {
        (0..m.nv)
            .map(|i| s * (((i * 7 + k) % 11) as f64 / 5.0 - 1.0))
            .collect::<Vec<_>>()
    };
    let q0 = m.neutral();
    let mut q = q0.clone();
    m.integrate(&q0, &seq(1, 0.8), &mut q);
    let (v, a, tau) = (seq(2, 1.0), seq(3, 2.0), seq(4, 5.0));
    let mut data = Data::new(&m);
    let mut factor = MassFactor::new(&m);
    let mut sink = 0.0;
    for _ in 0..n {
        sink += match alg.as_str() {
            "crba" => crba(&m, &mut data, black_box(&q))[(0, 0)],
            "crba_world" => crba_world(&m, &mut data, black_box(&q))[(0, 0)],
            "rnea" => rnea(&m, &mut data, black_box(&q), &v, &a)[0],
            "aba" => aba(&m, &mut data, black_box(&q), &v, &tau)[0],
            "factor" => {
                factor.factorize(&m, &mut data, black_box(&q)).unwrap();
                data.j[0][0]
            }
            _ => panic!("unknown algorithm {alg}"),
        };
    }
    println!("{sink}");
}
