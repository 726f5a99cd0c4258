//! The URDF document's reader: its `<link>` and `<joint>` elements, with their inertials,
//! collision geometry, limits and dynamics, read into [`Link`] and [`UJoint`] records (the
//! checks on numbers, masses and inertias, with errors naming the element and its line), for
//! `urdf.rs` to assemble into a [`Model`](super::model::Model).

use super::collision::{MeshFormat, Shape};
use super::joint::JointKind;
use super::spatial::{Inertia, Se3};
use crate::error::{Error, Location, Result};
use crate::math::{Mat3, Vec3};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A `<link>`: its inertia (`None`: none given, or a frame-only link of mass 0) and its
/// collision shapes with their origins in the link frame.
pub(super) struct Link {
    pub(super) name: String,
    pub(super) inertia: Option<Inertia>,
    pub(super) collisions: Vec<(Se3, Shape)>,
}

/// A `<joint>`: its kind, the links it joins (indices in file order), its origin in the parent
/// link's frame, its limits (rad or m; N·m or N; rad/s or m/s) and dynamics.
pub(super) struct UJoint {
    pub(super) name: String,
    pub(super) kind: Option<JointKind>, // None: fixed
    pub(super) parent: usize,
    pub(super) child: usize,
    pub(super) origin: Se3,
    pub(super) lower: f64,
    pub(super) upper: f64,
    pub(super) effort: f64,
    pub(super) velocity: f64,
    pub(super) damping: f64,
    pub(super) friction: f64,
}

/// Reads the elements of one URDF document, `file` naming it in errors.
pub(super) struct Parser<'a, 'd> {
    pub(super) doc: &'a roxmltree::Document<'d>,
    pub(super) file: &'a str,
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
    pub(super) fn err(&self, node: roxmltree::Node, msg: impl Into<String>) -> Error {
        Error::parse(
            self.file,
            Location::Line(self.line(node)),
            format!("{}: {}", self.context(node), msg.into()),
        )
    }

    pub(super) fn attr<'n>(&self, node: roxmltree::Node<'n, '_>, name: &str) -> Result<&'n str> {
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

    pub(super) fn link(&self, node: roxmltree::Node, name: String, dir: &Path) -> Result<Link> {
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

    pub(super) fn joint(
        &self,
        node: roxmltree::Node,
        links: &HashMap<String, usize>,
    ) -> Result<UJoint> {
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
