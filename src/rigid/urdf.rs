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
//! non-finite number, an indefinite inertia, a loop, a zero axis, and a moving joint whose
//! subtree carries no inertia (singular mass matrix). `<visual>` is ignored; `<collision>`
//! forms the collision model ([`Geometry`]); `<limit>` and `<dynamics>` fill
//! [`Model::limits`], [`Model::damping`] and [`Model::friction`].

use super::collision::{Geometry, MeshFormat, Shape};
use super::joint::JointKind;
use super::model::{Frame, FrameKind, Model};
use super::spatial::{Inertia, Se3};
use crate::error::{Error, Location, Result};
use crate::math::{Mat3, Vec3};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

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

struct Link {
    name: String,
    inertia: Option<Inertia>,
    collisions: Vec<(Se3, Shape)>,
}

struct UJoint {
    name: String,
    kind: Option<JointKind>, // None: fixed
    parent: usize,
    child: usize,
    origin: Se3,
    lower: f64,
    upper: f64,
    effort: f64,
    velocity: f64,
    damping: f64,
    friction: f64,
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
    Ok(model)
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

struct Parser<'a, 'd> {
    doc: &'a roxmltree::Document<'d>,
    file: &'a str,
}

/// The largest eigenvalue deficit tolerated in a rotational inertia, relative to its largest
/// eigenvalue: rounded positive semi-definite inertias (Go1's dummy `base`, all six entries
/// 1e-6, has eigenvalues 3e-6, 0, 0) are accepted, clearly indefinite ones refused.
const INERTIA_PSD_TOLERANCE: f64 = 1e-9;

impl Parser<'_, '_> {
    fn line(&self, node: roxmltree::Node) -> usize {
        self.doc.text_pos_at(node.range().start).row as usize
    }

    /// What an element is, for messages: the nearest enclosing `<link>` or `<joint>` by name,
    /// then the element itself (`link 'b' <mass>`, `joint 'j' <limit>`, `<robot>`).
    fn context(&self, node: roxmltree::Node) -> String {
        let owner = node.ancestors().find(|n| {
            (n.has_tag_name("link") || n.has_tag_name("joint")) && n.attribute("name").is_some()
        });
        let tag = node.tag_name().name();
        match owner {
            Some(o) if o == node => format!("{tag} '{}'", o.attribute("name").unwrap_or("")),
            Some(o) => format!(
                "{} '{}' <{tag}>",
                o.tag_name().name(),
                o.attribute("name").unwrap_or("")
            ),
            None => format!("<{tag}>"),
        }
    }

    /// A parse error at `node`'s line, prefixed with the element's [`Parser::context`].
    fn err(&self, node: roxmltree::Node, msg: impl Into<String>) -> Error {
        Error::parse(
            self.file,
            Location::Line(self.line(node)),
            format!("{}: {}", self.context(node), msg.into()),
        )
    }

    fn attr<'n>(&self, node: roxmltree::Node<'n, '_>, name: &str) -> Result<&'n str> {
        node.attribute(name)
            .ok_or_else(|| self.err(node, format!("lacks the attribute '{name}'")))
    }

    fn numbers<const N: usize>(&self, node: roxmltree::Node, name: &str) -> Result<[f64; N]> {
        let text = self.attr(node, name)?;
        let mut out = [0.0; N];
        let mut it = text.split_whitespace();
        for o in out.iter_mut() {
            let tok = it.next().ok_or_else(|| {
                self.err(
                    node,
                    format!("attribute '{name}' needs {N} numbers, got '{text}'"),
                )
            })?;
            *o = tok
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    self.err(
                        node,
                        format!("attribute '{name}': '{tok}' is not a finite number"),
                    )
                })?;
        }
        if it.next().is_some() {
            return Err(self.err(
                node,
                format!("attribute '{name}' needs {N} numbers, got '{text}'"),
            ));
        }
        Ok(out)
    }

    fn number(&self, node: roxmltree::Node, name: &str) -> Result<f64> {
        Ok(self.numbers::<1>(node, name)?[0])
    }

    /// The optional attribute `name`, `default` when absent.
    fn number_or(&self, node: roxmltree::Node, name: &str, default: f64) -> Result<f64> {
        if node.attribute(name).is_none() {
            return Ok(default);
        }
        self.number(node, name)
    }

    fn vec3_or(&self, node: roxmltree::Node, name: &str, default: Vec3) -> Result<Vec3> {
        if node.attribute(name).is_none() {
            return Ok(default);
        }
        let [x, y, z] = self.numbers::<3>(node, name)?;
        Ok(Vec3::new(x, y, z))
    }

    fn child<'n, 'i>(
        &self,
        node: roxmltree::Node<'n, 'i>,
        tag: &str,
    ) -> Option<roxmltree::Node<'n, 'i>> {
        node.children().find(|n| n.has_tag_name(tag))
    }

    fn origin(&self, node: roxmltree::Node) -> Result<Se3> {
        match self.child(node, "origin") {
            None => Ok(Se3::identity()),
            Some(o) => Ok(Se3::from_xyz_rpy(
                self.vec3_or(o, "xyz", Vec3::zeros())?,
                self.vec3_or(o, "rpy", Vec3::zeros())?,
            )),
        }
    }

    fn positive(&self, node: roxmltree::Node, name: &str) -> Result<f64> {
        let x = self.number(node, name)?;
        if x <= 0.0 {
            return Err(self.err(node, format!("'{name}' must be positive, got {x}")));
        }
        Ok(x)
    }

    fn non_negative(&self, node: roxmltree::Node, name: &str, default: f64) -> Result<f64> {
        let x = self.number_or(node, name, default)?;
        if x < 0.0 {
            return Err(self.err(node, format!("'{name}' must be non-negative, got {x}")));
        }
        Ok(x)
    }

    /// The link's `<inertial>`, `None` when absent or exactly zero (mass 0, zero inertia: a
    /// frame-only link, which Pinocchio skips too). Mass must be non-negative and the
    /// rotational inertia positive semi-definite (to [`INERTIA_PSD_TOLERANCE`]).
    fn inertial(&self, node: roxmltree::Node) -> Result<Option<Inertia>> {
        let Some(inertial) = self.child(node, "inertial") else {
            return Ok(None);
        };
        let origin = self.origin(inertial)?;
        let mass_node = self
            .child(inertial, "mass")
            .ok_or_else(|| self.err(inertial, "lacks <mass>"))?;
        let mass = self.number(mass_node, "value")?;
        if mass < 0.0 {
            return Err(self.err(mass_node, format!("mass must be non-negative, got {mass}")));
        }
        let inode = self
            .child(inertial, "inertia")
            .ok_or_else(|| self.err(inertial, "lacks <inertia>"))?;
        let g = |k: &str| self.number(inode, k);
        let (ixx, ixy, ixz, iyy, iyz, izz) = (
            g("ixx")?,
            g("ixy")?,
            g("ixz")?,
            g("iyy")?,
            g("iyz")?,
            g("izz")?,
        );
        let i = Mat3::new(ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz);
        let eig = i.symmetric_eigenvalues();
        let (lo, hi) = (eig.min(), eig.amax());
        if lo < -INERTIA_PSD_TOLERANCE * hi {
            return Err(self.err(
                inode,
                format!("the inertia matrix is not positive semi-definite (eigenvalue {lo:e})"),
            ));
        }
        if mass == 0.0 && i == Mat3::zeros() {
            return Ok(None);
        }
        Ok(Some(Inertia::new(
            mass,
            origin.trans,
            origin.rot * i * origin.rot.transpose(),
        )))
    }

    fn link(&self, node: roxmltree::Node, name: String, dir: &Path) -> Result<Link> {
        let inertia = self.inertial(node)?;
        let mut collisions = Vec::new();
        for c in node.children().filter(|n| n.has_tag_name("collision")) {
            let origin = self.origin(c)?;
            let geom = self
                .child(c, "geometry")
                .ok_or_else(|| self.err(c, "lacks <geometry>"))?;
            let shape_node = geom
                .children()
                .find(|n| n.is_element())
                .ok_or_else(|| self.err(geom, "is empty"))?;
            collisions.push((origin, self.shape(shape_node, dir)?));
        }
        Ok(Link {
            name,
            inertia,
            collisions,
        })
    }

    /// One `<geometry>` child: box, cylinder, capsule, sphere or an STL/OBJ mesh.
    fn shape(&self, node: roxmltree::Node, dir: &Path) -> Result<Shape> {
        Ok(match node.tag_name().name() {
            "box" => {
                let [x, y, z] = self.numbers::<3>(node, "size")?;
                if x <= 0.0 || y <= 0.0 || z <= 0.0 {
                    return Err(self.err(node, "box sizes must be positive"));
                }
                Shape::Box {
                    size: Vec3::new(x, y, z),
                }
            }
            "cylinder" => Shape::Cylinder {
                radius: self.positive(node, "radius")?,
                length: self.positive(node, "length")?,
            },
            "capsule" => {
                let radius = self.positive(node, "radius")?;
                let length = self.number(node, "length")?;
                if length < 0.0 {
                    return Err(
                        self.err(node, format!("'length' must be non-negative, got {length}"))
                    );
                }
                Shape::Capsule { radius, length }
            }
            "sphere" => Shape::Sphere {
                radius: self.positive(node, "radius")?,
            },
            "mesh" => {
                let uri = self.attr(node, "filename")?;
                let format = MeshFormat::from_name(uri).ok_or_else(|| {
                    self.err(
                        node,
                        format!("mesh '{uri}': only STL (.stl) and OBJ (.obj) collision meshes are supported"),
                    )
                })?;
                let scale = self.vec3_or(node, "scale", Vec3::new(1.0, 1.0, 1.0))?;
                // Negative factors mirror the mesh (used for left/right parts); zero flattens it.
                if scale.iter().any(|&s| s == 0.0) {
                    return Err(self.err(node, format!("mesh '{uri}': a scale factor is zero")));
                }
                Shape::Mesh {
                    uri: uri.to_string(),
                    path: resolve_mesh(uri, dir),
                    format,
                    scale,
                }
            }
            other => {
                return Err(self.err(node, format!("unknown geometry <{other}>")));
            }
        })
    }

    fn joint(&self, node: roxmltree::Node, links: &HashMap<String, usize>) -> Result<UJoint> {
        let name = self.attr(node, "name")?.to_string();
        let ty = self.attr(node, "type")?;
        let link_of = |tag: &str| -> Result<usize> {
            let n = self
                .child(node, tag)
                .ok_or_else(|| self.err(node, format!("lacks <{tag}>")))?;
            let l = self.attr(n, "link")?;
            links
                .get(l)
                .copied()
                .ok_or_else(|| self.err(n, format!("unknown link '{l}'")))
        };
        let parent = link_of("parent")?;
        let child = link_of("child")?;
        if parent == child {
            return Err(self.err(node, "connects a link to itself (a loop)"));
        }
        let origin = self.origin(node)?;
        let axis = match self.child(node, "axis") {
            None => Vec3::x(),
            Some(a) => {
                let v = self.vec3_or(a, "xyz", Vec3::x())?;
                let n = v.norm();
                if n < 1e-12 {
                    return Err(self.err(a, "zero axis"));
                }
                v / n
            }
        };
        let kind = match ty {
            "revolute" => Some(JointKind::Revolute { axis }),
            "continuous" => Some(JointKind::RevoluteUnbounded { axis }),
            "prismatic" => Some(JointKind::Prismatic { axis }),
            "fixed" => None,
            "floating" => Some(JointKind::FreeFlyer),
            "spherical" | "ball" => Some(JointKind::Spherical),
            other => {
                return Err(self.err(node, format!("unsupported type '{other}'")));
            }
        };
        let (mut lower, mut upper) = (f64::NEG_INFINITY, f64::INFINITY);
        let (mut effort, mut velocity) = (f64::INFINITY, f64::INFINITY);
        if let Some(l) = self.child(node, "limit") {
            lower = self.number_or(l, "lower", lower)?;
            upper = self.number_or(l, "upper", upper)?;
            effort = self.non_negative(l, "effort", effort)?;
            velocity = self.non_negative(l, "velocity", velocity)?;
            if lower > upper {
                return Err(self.err(l, format!("lower limit {lower} > upper limit {upper}")));
            }
        }
        let (mut damping, mut friction) = (0.0, 0.0);
        if let Some(d) = self.child(node, "dynamics") {
            damping = self.non_negative(d, "damping", 0.0)?;
            friction = self.non_negative(d, "friction", 0.0)?;
        }
        Ok(UJoint {
            name,
            kind,
            parent,
            child,
            origin,
            lower,
            upper,
            effort,
            velocity,
            damping,
            friction,
        })
    }
}

/// Resolves a URDF mesh URI: `file://` and plain paths (relative to the URDF's folder), and
/// `package://pkg/rest` by looking for `rest` under the URDF's folder and its ancestors
/// (with and without the package folder). Returns the existing file, or `None`.
fn resolve_mesh(uri: &str, dir: &Path) -> Option<PathBuf> {
    if let Some(rest) = uri.strip_prefix("package://") {
        let (pkg, tail) = rest.split_once('/')?;
        let mut d = Some(dir);
        while let Some(base) = d {
            for cand in [base.join(pkg).join(tail), base.join(tail)] {
                if cand.is_file() {
                    return Some(cand);
                }
            }
            d = base.parent();
        }
        return None;
    }
    let path = uri.strip_prefix("file://").unwrap_or(uri);
    let p = Path::new(path);
    let full = if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    };
    full.is_file().then_some(full)
}

#[cfg(test)]
mod tests {
    use super::*;

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
