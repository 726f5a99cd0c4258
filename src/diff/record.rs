//! What the derivatives of one step need, kept from the forward step itself: the start state,
//! v⁺, and the step's own factorisation of A and stiffness K(x) — taken from the stepper by
//! swapping buffers, never copied or recomputed (docs/derivatives.md: k directions cost k solves
//! with the factorisation already computed).

use crate::actuator::{ActuatorKind, Drive};
use crate::contact::BoundaryGradient;
use crate::error::{Error, Result};
use crate::linalg::{FactorKind, NumericFactor};
use crate::material::MaterialPoint;
use crate::math::Vec3;
use crate::scene::{ContactMemory, DelassusKind, Scene, State, StepReport, Stepper};

use super::contact_chain::{ContactRecord, SoftStart};
use super::rigid_record::RigidRecord;

/// One body's part of a [`StepRecord`].
pub struct BodyRecord {
    /// Positions xₙ at the start of the step (m).
    pub x: Vec<Vec3>,
    /// Velocities vₙ at the start of the step (m/s).
    pub v: Vec<Vec3>,
    /// Velocities v⁺ at the end of the step (m/s).
    pub v_plus: Vec<Vec3>,
    /// Elastic forces f(xₙ) (N).
    pub forces: Vec<Vec3>,
    /// λ of each actuator in this step (N, Pa or N·m, indexed like the body's actuators).
    pub actuator_forces: Vec<f64>,
    /// The step's factorisation of A = M + hD + h²K(xₙ) (free DOFs).
    factor: NumericFactor,
    /// K(xₙ) on the body's pattern (N/m).
    stiffness: Vec<f64>,
    /// Every element's material point at xₙ, kept by the step's own force pass (the ν
    /// derivative reuses them instead of re-evaluating the law).
    pub(crate) points: Vec<MaterialPoint>,
    /// The index in [`StepRecord::contacts`] of the NCP the body took part in, if any.
    pub(crate) group: Option<usize>,
    /// Number of contacts the body took part in.
    pub(crate) contact_count: usize,
}

impl BodyRecord {
    /// The step's factorisation of A (free DOFs).
    pub fn factor(&self) -> &NumericFactor {
        &self.factor
    }

    /// K(xₙ) on the body's pattern (N/m).
    pub fn stiffness(&self) -> &[f64] {
        &self.stiffness
    }

    /// The index in [`StepRecord::contacts`] of the NCP the body took part in this step, if
    /// any ([`StepRecord::contact`] gives the record itself).
    pub fn contact_group(&self) -> Option<usize> {
        self.group
    }

    /// Number of contacts the body took part in this step (a contact between two bodies
    /// counts for both).
    pub fn contacts(&self) -> usize {
        self.contact_count
    }

    /// Bytes held by this record (the factor, the stiffness and the three nodal fields).
    pub fn bytes(&self) -> usize {
        8 * (self.factor.symbolic().factor_len() + self.stiffness.len() + 12 * self.x.len())
            + std::mem::size_of::<MaterialPoint>() * self.points.len()
    }
}

/// Everything the derivatives of one step need (see the module doc).
pub struct StepRecord {
    /// Time step h (s).
    pub h: f64,
    /// Per soft body, in scene order.
    pub bodies: Vec<BodyRecord>,
    /// One per NCP of the step with contacts (a body alone, or a group of bodies touching
    /// each other, with the rigid rows when soft and rigid bodies meet; the rigid NCP when
    /// they do not), ordered by their smallest body.
    pub contacts: Vec<ContactRecord>,
    /// The rigid systems' part (`None` in a scene without free bodies or robots).
    pub rigid: Option<RigidRecord>,
}

impl StepRecord {
    /// Bytes held by this record.
    pub fn bytes(&self) -> usize {
        self.bodies.iter().map(BodyRecord::bytes).sum::<usize>()
            + self
                .contacts
                .iter()
                .map(ContactRecord::bytes)
                .sum::<usize>()
            + self.rigid.as_ref().map_or(0, RigidRecord::bytes)
    }

    /// The contacts (and their derivatives) of the NCP body `body` took part in, if any.
    pub fn contact(&self, body: usize) -> Option<&ContactRecord> {
        self.bodies[body].group.map(|g| &self.contacts[g])
    }
}

/// Whether the derivatives of this crate cover `scene`'s step; errors say what is not
/// covered: full Newton (`newton_iterations > 1`), displacement- and volume-driven cables and
/// cavities (whose λ is solved inside the step) and per-step force limits. Contacts against
/// obstacles, self-contacts, contacts between bodies, and contacts and attachments between
/// soft and rigid bodies are covered.
/// Angle-driven servos (pinned horns, `scene::step::free::prescribed`) are covered, their angle target
/// being the parameter `actuator:NAME`. Bodies of law `corotational_sofa` (no exact tangent,
/// [`crate::material::Law::has_exact_tangent`]) are refused.
pub fn check_differentiable(scene: &Scene) -> Result<()> {
    for body in &scene.bodies {
        let law = body.material().law();
        if !law.has_exact_tangent() {
            return Err(Error::invalid(
                format!("soft_body.{}.law", body.name()),
                law.no_exact_tangent(),
            ));
        }
    }
    if scene.contact.settings.delassus == DelassusKind::Factored && !scene.bodies.is_empty() {
        return Err(Error::invalid(
            "contact.delassus",
            "is \"factored\": the step's derivatives need the assembled Delassus matrix \
             (delassus = \"assembled\", the default)",
        ));
    }
    if scene.simulation.newton_iterations != 1 {
        return Err(Error::invalid(
            "simulation.newton_iterations",
            format!(
                "is {}: derivatives cover the linearised step (newton_iterations = 1) only",
                scene.simulation.newton_iterations
            ),
        ));
    }
    for b in 0..scene.bodies.len() {
        for a in &scene.body_actuation(b).actuators {
            if a.max_force_step.is_finite() {
                return Err(Error::invalid(
                    format!("soft_body.{}.{}", scene.bodies[b].name(), a.name),
                    "has a per-step force limit: derivatives cover actuators whose input is applied in full each step",
                ));
            }
            if a.value_bounds != [f64::NEG_INFINITY, f64::INFINITY] {
                return Err(Error::invalid(
                    format!("soft_body.{}.{}", scene.bodies[b].name(), a.name),
                    "has displacement bounds (max_displacement / min_displacement): its force is solved in the step; derivatives cover actuators whose input is applied as given",
                ));
            }
            if matches!(a.drive, Drive::Target(_)) && !matches!(a.kind, ActuatorKind::Servo(_)) {
                return Err(Error::invalid(
                    format!("soft_body.{}.{}", scene.bodies[b].name(), a.name),
                    "is displacement/volume-driven: derivatives cover force-driven actuators and angle-driven servos only (give `force` or `pressure`)",
                ));
            }
        }
    }
    Ok(())
}

/// A recycled record's buffers: factor, stiffness values, material points.
type SpareBuffers = (NumericFactor, Vec<f64>, Vec<MaterialPoint>);

/// A stepper that keeps what each step's derivatives need ([`StepRecord`]); records given
/// back with [`Recorder::recycle`] lend their buffers to later steps.
pub struct Recorder {
    stepper: Stepper,
    boundary: BoundaryGradient,
    spare: Vec<Vec<SpareBuffers>>,
}

impl Recorder {
    /// A recorder for `scene`. Errors as [`check_differentiable`] and [`Stepper::new`].
    pub fn new(scene: &Scene) -> Result<Recorder> {
        check_differentiable(scene)?;
        let mut stepper = Stepper::new(scene)?;
        for i in 0..scene.bodies.len() {
            stepper.body_mut(i).keep_for_derivatives(true);
        }
        Ok(Recorder {
            stepper,
            boundary: BoundaryGradient::OneSided,
            spare: (0..scene.bodies.len()).map(|_| Vec::new()).collect(),
        })
    }

    /// Chooses the contact-mode boundary rule of the records' NCP derivatives (default
    /// [`BoundaryGradient::OneSided`]; see `contact::BoundaryGradient`).
    pub fn with_boundary(mut self, boundary: BoundaryGradient) -> Recorder {
        self.boundary = boundary;
        self
    }

    /// The underlying stepper.
    pub fn stepper(&self) -> &Stepper {
        &self.stepper
    }

    /// What the next step carries over beside the state ([`Stepper::memory`]).
    pub fn memory(&self) -> ContactMemory {
        self.stepper.memory()
    }

    /// Restores what [`Self::memory`] took, before stepping again from the state saved with
    /// it: the step then repeats bit for bit.
    pub fn restore_memory(&mut self, memory: &ContactMemory) {
        self.stepper.restore_memory(memory);
    }

    /// Advances `state` by one step of `scene` and returns the step's report and record.
    /// Errors as [`Stepper::step`], and on invalid contact data for the NCP derivative.
    pub fn step(&mut self, scene: &Scene, state: &mut State) -> Result<(StepReport, StepRecord)> {
        let starts: Vec<(Vec<Vec3>, Vec<Vec3>)> = state
            .bodies
            .iter()
            .map(|b| (b.positions.clone(), b.velocities.clone()))
            .collect();
        let rigid_start = state.rigid.clone();
        let report = self.stepper.step(scene, state)?;
        let mut rigid = if scene.rigid.systems.is_empty() {
            None
        } else {
            Some(RigidRecord::new(scene, &rigid_start, &state.rigid)?)
        };
        // One contact record per NCP of the step (the contact stage's groups).
        let nb = starts.len();
        let between = self.stepper.contact().body_contacts();
        let mut contacts = Vec::new();
        let mut groups = vec![None; nb];
        {
            let workspaces: Vec<&crate::scene::ContactWorkspace> =
                (0..nb).map(|i| self.stepper.body(i).contact()).collect();
            let x: Vec<&[Vec3]> = starts.iter().map(|(x, _)| x.as_slice()).collect();
            let v: Vec<&[Vec3]> = starts.iter().map(|(_, v)| v.as_slice()).collect();
            let v_plus: Vec<&[Vec3]> = state
                .bodies
                .iter()
                .map(|b| b.velocities.as_slice())
                .collect();
            let soft = SoftStart {
                x: &x,
                v: &v,
                v_plus: &v_plus,
            };
            for ncp in self.stepper.contact().groups() {
                if let Some(record) = ContactRecord::build(
                    scene,
                    ncp,
                    &workspaces,
                    between,
                    &soft,
                    (self.stepper.rigid(), rigid.as_ref()),
                    self.boundary,
                )? {
                    for &b in ncp.members() {
                        groups[b] = Some(contacts.len());
                    }
                    contacts.push(record);
                }
            }
        }
        if let Some(rec) = &mut rigid {
            // The velocity update's derivatives at the rows' generalised force Σ Jᵀλ.
            let mut force = vec![0.0; rec.n()];
            for chain in contacts
                .iter()
                .filter_map(|c: &ContactRecord| c.chain.as_ref())
            {
                for (f, g) in force.iter_mut().zip(chain.generalised_force()) {
                    *f += g;
                }
            }
            rec.set_force(scene, &force);
        }
        let mut bodies = Vec::with_capacity(nb);
        for (i, (x, v)) in starts.into_iter().enumerate() {
            let contact_count = groups[i].map_or(0, |g: usize| contacts[g].body_contact_count(i));
            let ws = self.stepper.body_mut(i);
            let (mut factor, mut stiffness, mut points) =
                self.spare[i].pop().unwrap_or_else(|| {
                    (
                        NumericFactor::new(ws.factor().symbolic().clone(), FactorKind::Llt),
                        vec![0.0; ws.stiffness().len()],
                        Vec::new(),
                    )
                });
            ws.swap_factor(&mut factor);
            ws.swap_stiffness(&mut stiffness);
            ws.swap_material_points(&mut points);
            bodies.push(BodyRecord {
                forces: ws.forces().to_vec(),
                actuator_forces: state.actuator_forces[i].clone(),
                x,
                v,
                v_plus: state.bodies[i].velocities.clone(),
                factor,
                stiffness,
                points,
                group: groups[i],
                contact_count,
            });
        }
        Ok((
            report,
            StepRecord {
                h: scene.simulation.dt,
                bodies,
                contacts,
                rigid,
            },
        ))
    }

    /// Takes back a record's buffers for later steps.
    pub fn recycle(&mut self, record: StepRecord) {
        for (spare, b) in self.spare.iter_mut().zip(record.bodies) {
            spare.push((b.factor, b.stiffness, b.points));
        }
    }
}
