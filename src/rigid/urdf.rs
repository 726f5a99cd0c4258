//! URDF loading (links, joints with limits and dynamics, inertials, collision geometry) into a
//! [`Model`], with a fixed or free-flyer base. Joint order: depth-first from the root link, a
//! link's children in file order ([`ChildOrder::File`], the default) or sorted by joint name
//! ([`ChildOrder::JointName`], which is what Pinocchio's URDF parser produces, because urdfdom
//! keeps joints in a name-sorted map). Fixed joints are merged into their parent body
//! (inertia added as Pinocchio does, frames, geometry).
//!
//! Accepted as Pinocchio accepts them: links without `<inertial>`, frame-only links of mass 0
//! and zero inertia (skipped), and positive semi-definite inertias that are not definite (a
//! dummy root link). Refused with an error naming the link or joint: a negative mass, a
//! non-finite number, an indefinite inertia, a loop, a zero axis, a moving joint whose
//! subtree carries no inertia (singular mass matrix), and a moving body (its links and those
//! welded to it) whose principal moments break the triangle inequality I₁ + I₂ ≥ I₃, as
//! MuJoCo refuses it. `<visual>` is ignored; `<collision>`
//! forms the collision model ([`Geometry`]); `<limit>` and `<dynamics>` fill
//! [`Model::limits`], [`Model::damping`] and [`Model::friction`].

use super::collision::Geometry;
use super::joint::JointKind;
use super::model::{Frame, FrameKind, Model};
use super::spatial::Se3;
use super::urdf_parser::{Link, Parser, UJoint};
use crate::error::{Error, Location, Result};
use std::collections::HashMap;
use std::path::Path;

/// How the URDF's root link is attached to the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Base {
    /// The root link is welded to the world.
    #[default]
    Fixed,
    /// The root link moves freely: a free-flyer joint `root_joint` (nq 7, nv 6) comes first.
    FreeFlyer,
}

/// In which order the child joints of a link are visited (the depth-first joint order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChildOrder {
    /// As they appear in the file.
    #[default]
    File,
    /// Sorted by joint name (Pinocchio / urdfdom order).
    JointName,
}

/// Reads and parses the URDF file at `path` (mesh paths resolve relative to its folder),
/// children in file order.
pub fn load_urdf(path: &Path, base: Base) -> Result<Model> {
    load_urdf_ordered(path, base, ChildOrder::File)
}

/// [`load_urdf`] with a choice of child order.
pub fn load_urdf_ordered(path: &Path, base: Base, order: ChildOrder) -> Result<Model> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    parse_urdf_ordered(&text, &path.display().to_string(), dir, base, order)
}

/// Parses URDF `text` (`file` labels errors, `dir` resolves relative mesh paths), children in
/// file order.
pub fn parse_urdf(text: &str, file: &str, dir: &Path, base: Base) -> Result<Model> {
    parse_urdf_ordered(text, file, dir, base, ChildOrder::File)
}

/// [`parse_urdf`] with a choice of child order.
pub fn parse_urdf_ordered(
    text: &str,
    file: &str,
    dir: &Path,
    base: Base,
    order: ChildOrder,
) -> Result<Model> {
    let doc = roxmltree::Document::parse(text).map_err(|e| {
        Error::parse(
            file,
            Location::Line(e.pos().row as usize),
            format!("malformed XML: {e}"),
        )
    })?;
    let p = Parser { doc: &doc, file };
    let robot = doc.root_element();
    if robot.tag_name().name() != "robot" {
        return Err(p.err(robot, "the root element must be <robot>"));
    }
    let mut links: Vec<Link> = Vec::new();
    let mut link_index: HashMap<String, usize> = HashMap::new();
    for node in robot.children().filter(|n| n.has_tag_name("link")) {
        let name = p.attr(node, "name")?.to_string();
        if link_index.insert(name.clone(), links.len()).is_some() {
            return Err(p.err(node, "duplicate link name"));
        }
        let link = p.link(node, name, dir)?;
        links.push(link);
    }
    if links.is_empty() {
        return Err(p.err(robot, "the robot has no <link>"));
    }
    let mut joints: Vec<UJoint> = Vec::new();
    let mut joint_names: HashMap<String, usize> = HashMap::new();
    let mut parent_of: Vec<Option<usize>> = vec![None; links.len()];
    for node in robot.children().filter(|n| n.has_tag_name("joint")) {
        let j = p.joint(node, &link_index)?;
        if joint_names.insert(j.name.clone(), joints.len()).is_some() {
            return Err(p.err(node, "duplicate joint name"));
        }
        if let Some(other) = parent_of[j.child] {
            return Err(p.err(
                node,
                format!(
                    "link '{}' has two parents (joints '{}' and '{}'): kinematic loops are not supported",
                    links[j.child].name, joints[other].name, j.name
                ),
            ));
        }
        parent_of[j.child] = Some(joints.len());
        joints.push(j);
    }
    let roots: Vec<usize> = (0..links.len())
        .filter(|&l| parent_of[l].is_none())
        .collect();
    let root = match roots.as_slice() {
        [r] => *r,
        [] => {
            return Err(Error::invalid(
                format!("{file}: robot"),
                "every link has a parent: the joints form a loop",
            ));
        }
        many => {
            let names: Vec<&str> = many.iter().map(|&l| links[l].name.as_str()).collect();
            return Err(Error::invalid(
                format!("{file}: robot"),
                format!(
                    "several root links ({}): the links do not form one tree",
                    names.join(", ")
                ),
            ));
        }
    };
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); links.len()];
    for (k, j) in joints.iter().enumerate() {
        children[j.parent].push(k);
    }
    if order == ChildOrder::JointName {
        for c in &mut children {
            c.sort_by(|&a, &b| joints[a].name.cmp(&joints[b].name));
        }
    }
    let name = robot.attribute("name").unwrap_or("robot");
    let mut b = Builder {
        model: Model::new(name),
        links: &links,
        joints: &joints,
        children: &children,
        visited: vec![false; links.len()],
    };
    let root_joint = match base {
        Base::Fixed => 0,
        Base::FreeFlyer => {
            b.model
                .add_joint(0, JointKind::FreeFlyer, Se3::identity(), "root_joint")?
        }
    };
    b.visit(root, root_joint, Se3::identity())?;
    if let Some(l) = b.visited.iter().position(|v| !v) {
        return Err(Error::invalid(
            format!("{file}: link '{}'", links[l].name),
            "not reachable from the root link: the joints form a loop",
        ));
    }
    let model = b.model;
    check_mass_matrix(&model, file)?;
    check_principal_moments(&model, file)?;
    Ok(model)
}

/// Refuses a moving body whose rotational inertia about its centre of mass (its links' and
/// those welded to them by fixed joints, added) has principal moments that break the triangle
/// inequality I₁ + I₂ ≥ I₃ ([`breaks_triangle_inequality`](super::breaks_triangle_inequality)):
/// no distribution of mass has them, and MuJoCo refuses them too. The bodies as simulated are
/// checked, not each `<inertial>`, as MuJoCo does once it has fused static bodies: a dummy link
/// of negligible mass welded to a real one (Go1's `base`, all six entries 1e-6, eigenvalues
/// 3e-6, 0, 0) leaves the body it joins physical. The error names the body's first link and
/// the links welded to it.
fn check_principal_moments(model: &Model, file: &str) -> Result<()> {
    for j in 1..model.njoints() {
        let moments = super::principal_moments(&model.inertias[j].inertia_com);
        if !super::breaks_triangle_inequality(moments) {
            continue;
        }
        let links: Vec<&str> = model
            .frames
            .iter()
            .filter(|f| f.parent_joint == j && f.kind == FrameKind::Body)
            .map(|f| f.name.as_str())
            .collect();
        let welded = match links.get(1..) {
            Some(rest) if !rest.is_empty() => {
                format!(" (with the links welded to it: {})", rest.join(", "))
            }
            _ => String::new(),
        };
        return Err(Error::invalid(
            format!(
                "{file}: link '{}'",
                links.first().copied().unwrap_or(&model.joints[j].name)
            ),
            format!(
                "the body of joint '{}'{welded}: {}",
                model.joints[j].name,
                super::principal_moments::triangle_message(moments)
            ),
        ));
    }
    Ok(())
}

/// Refuses models whose mass matrix is singular, naming a joint: first a moving joint whose
/// whole subtree carries no inertia (mass 0 and zero rotational inertia), then, for singular
/// cases the subtree test misses (a point mass behind a ball joint), the first coordinate whose
/// leading block of M is not positive definite at the neutral configuration.
fn check_mass_matrix(model: &Model, file: &str) -> Result<()> {
    for i in 1..model.njoints() {
        let carries =
            (i..model.njoints()).any(|k| model.is_ancestor(i, k) && !model.inertias[k].is_zero());
        if !carries {
            return Err(Error::invalid(
                format!("{file}: joint '{}'", model.joints[i].name),
                "moves only massless links (mass 0, no inertia): the mass matrix would be singular",
            ));
        }
    }
    let mut data = super::data::Data::new(model);
    let m = super::crba::crba(model, &mut data, &model.neutral()).clone();
    if m.clone().cholesky().is_some() {
        return Ok(());
    }
    let k = (1..=model.nv)
        .find(|&k| m.view((0, 0), (k, k)).into_owned().cholesky().is_none())
        .unwrap_or(model.nv);
    Err(Error::invalid(
        format!(
            "{file}: joint '{}'",
            model.joints[model.dof_joint[k - 1]].name
        ),
        "the mass matrix is singular: the joint moves no inertia in one of its directions",
    ))
}

struct Builder<'a> {
    model: Model,
    links: &'a [Link],
    joints: &'a [UJoint],
    children: &'a [Vec<usize>],
    visited: Vec<bool>,
}

impl Builder<'_> {
    /// Attaches link `l` to model joint `joint` at `placement` (link frame in the joint frame),
    /// then its children depth-first in file order.
    fn visit(&mut self, l: usize, joint: usize, placement: Se3) -> Result<()> {
        self.visited[l] = true;
        let link = &self.links[l];
        if let Some(inertia) = &link.inertia {
            self.model
                .append_body(joint, &inertia.transformed(&placement));
        }
        self.model.frames.push(Frame {
            name: link.name.clone(),
            parent_joint: joint,
            placement,
            kind: FrameKind::Body,
        });
        for (k, (origin, shape)) in link.collisions.iter().enumerate() {
            let name = if k == 0 {
                link.name.clone()
            } else {
                format!("{}_{k}", link.name)
            };
            self.model.geometries.push(Geometry {
                name,
                link: link.name.clone(),
                origin: *origin,
                parent_joint: joint,
                placement: placement.mul(origin),
                shape: shape.clone(),
            });
        }
        for &jk in &self.children[l] {
            let uj = &self.joints[jk];
            let at = placement.mul(&uj.origin);
            match uj.kind {
                None => {
                    self.model.frames.push(Frame {
                        name: uj.name.clone(),
                        parent_joint: joint,
                        placement: at,
                        kind: FrameKind::FixedJoint,
                    });
                    self.visit(uj.child, joint, at)?;
                }
                Some(kind) => {
                    let id = self.model.add_joint(joint, kind, at, uj.name.clone())?;
                    let jm = &self.model.joints[id];
                    let (iq, iv) = (jm.idx_q, jm.idx_v);
                    if matches!(
                        kind,
                        JointKind::Revolute { .. } | JointKind::Prismatic { .. }
                    ) {
                        self.model.limits.lower[iq] = uj.lower;
                        self.model.limits.upper[iq] = uj.upper;
                    }
                    for k in 0..kind.nv() {
                        self.model.limits.effort[iv + k] = uj.effort;
                        self.model.limits.velocity[iv + k] = uj.velocity;
                        self.model.damping[iv + k] = uj.damping;
                        self.model.friction[iv + k] = uj.friction;
                    }
                    self.model.frames.push(Frame {
                        name: uj.name.clone(),
                        parent_joint: id,
                        placement: Se3::identity(),
                        kind: FrameKind::Joint,
                    });
                    self.visit(uj.child, id, Se3::identity())?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Vec3;

    const TWO_LINKS: &str = r#"<robot name="t">
      <link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <link name="b"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
        <collision><origin xyz="0 0 -0.5"/><geometry><box size="0.1 0.1 1"/></geometry></collision></link>
      <link name="c"><inertial><mass value="3"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>
        <limit lower="-1" upper="1" effort="10" velocity="2"/></joint>
      <joint name="tip" type="fixed"><parent link="b"/><child link="c"/><origin xyz="0 0 -1"/></joint>
    </robot>"#;

    #[test]
    fn fixed_joints_merge_into_the_parent_body() {
        let m = parse_urdf(TWO_LINKS, "t", Path::new("."), Base::Fixed).unwrap();
        assert_eq!((m.nq, m.nv, m.njoints()), (1, 1, 2));
        let i = m.inertias[1];
        assert!((i.mass - 5.0).abs() < 1e-15);
        // Centre of mass of 2 kg at −0.5 and 3 kg at −1: (−1 − 3)/5 = −0.8.
        assert!((i.com - Vec3::new(0.0, 0.0, -0.8)).norm() < 1e-15);
        assert_eq!(m.limits.lower, vec![-1.0]);
        assert_eq!(m.limits.effort, vec![10.0]);
        assert_eq!(m.geometries.len(), 1);
        let tip = m.frame_id("c").unwrap();
        assert_eq!(m.frames[tip].parent_joint, 1);
        let fb = parse_urdf(TWO_LINKS, "t", Path::new("."), Base::FreeFlyer).unwrap();
        assert_eq!((fb.nq, fb.nv, fb.njoints()), (8, 7, 3));
        assert!((fb.inertias[1].mass - 1.0).abs() < 1e-15);
    }
}
