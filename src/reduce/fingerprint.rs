//! What a reduced model was built for: a hash of the body's mesh (rest positions and
//! tetrahedra), its fixed nodes, its actuators' geometry and its law. E, ν, density and
//! damping are not in it: they may change after the reduction (and stay differentiable).

use std::hash::Hasher;

use fnv::FnvHasher;

use crate::actuator::ActuatorKind;
use crate::fem::SoftBody;
use crate::scene::BodyActuation;

/// The fingerprint of `body` with actuators `act`, as 16 hex digits (FNV-1a, 64 bits).
pub fn fingerprint(body: &SoftBody, act: &BodyActuation) -> String {
    let mut h = FnvHasher::default();
    let float = |h: &mut FnvHasher, v: f64| h.write_u64(v.to_bits());
    h.write_usize(body.node_count());
    for (n, x) in body.rest_positions().iter().enumerate() {
        for c in 0..3 {
            float(&mut h, x[c]);
        }
        h.write_u8(body.is_fixed(n) as u8);
    }
    h.write_usize(body.elements().len());
    for t in body.elements() {
        for n in t.nodes {
            h.write_usize(n);
        }
    }
    h.write(body.material().law().name().as_bytes());
    h.write_usize(act.actuators.len());
    for a in &act.actuators {
        h.write(a.name.as_bytes());
        h.write(a.kind.label().as_bytes());
        // The geometry: every node the actuator's value depends on and its rest Jacobian.
        let mut rows = Vec::new();
        a.kind.jacobian(body.rest_positions(), &mut rows);
        for (n, g) in rows {
            h.write_usize(n);
            for c in 0..3 {
                float(&mut h, g[c]);
            }
        }
        if let ActuatorKind::Cable(c) = &a.kind
            && let Some(p) = c.pull_point
        {
            for k in 0..3 {
                float(&mut h, p[k]);
            }
        }
    }
    format!("{:016x}", h.finish())
}
