//! MSH 4.1 `$Entities`, `$Nodes` and `$Elements` sections (gmsh manual, "MSH file format").
//! The same fields in both encodings: text tokens in ASCII files; in binary files `int` is
//! 4 bytes and `size_t` (counts, node and element tags) 8 bytes. Nodes and elements come in
//! blocks, one per geometric entity; an element's physical groups are those of its entity.

use std::collections::HashMap;

use crate::error::Result;
use crate::math::Vec3;

use super::fields::Fields;
use super::{Builder, POINT, TETRAHEDRON, TRIANGLE, nodes_per_element};

/// (entity dimension, entity tag) → the physical tags of that entity.
pub(super) type EntityGroups = HashMap<(i64, i64), Vec<i64>>;

/// Reads the body of `$Entities` up to and including `$EndEntities`: points
/// (`tag x y z numPhysicalTags physicalTags…`), then curves, surfaces and volumes
/// (`tag minX minY minZ maxX maxY maxZ numPhysicalTags physicalTags… numBounding bounding…`).
pub(super) fn entities(f: &mut Fields<'_, '_>, out: &mut EntityGroups) -> Result<()> {
    f.start_binary();
    let mut counts = [0u64; 4];
    for (dim, count) in counts.iter_mut().enumerate() {
        *count = f.size(
            [
                "number of points",
                "number of curves",
                "number of surfaces",
                "number of volumes",
            ][dim],
        )?;
    }
    for (dim, &count) in counts.iter().enumerate() {
        let (reals, sizes) = if dim == 0 { (3, 1) } else { (6, 2) };
        let count = f.count(count, f.min_bytes(1, sizes, reals), "entities")?;
        for _ in 0..count {
            let tag = f.int("entity tag")?;
            for _ in 0..reals {
                f.real("entity coordinate")?;
            }
            let n = f.size("number of physical tags")?;
            let n = f.count(n, f.min_bytes(1, 0, 0), "physical tags")?;
            let mut physicals = Vec::with_capacity(n);
            for _ in 0..n {
                physicals.push(f.int("physical tag")?);
            }
            if dim > 0 {
                let n = f.size("number of bounding entities")?;
                f.count(n, f.min_bytes(1, 0, 0), "bounding entities")?;
                for _ in 0..n {
                    f.int("bounding entity tag")?;
                }
            }
            if !physicals.is_empty() {
                out.insert((dim as i64, tag), physicals);
            }
        }
    }
    f.c.expect("$EndEntities")
}

/// Reads the four `size_t` of a `$Nodes` or `$Elements` header: number of blocks, number of
/// items, minimum and maximum tag; returns the first two.
fn header(f: &mut Fields<'_, '_>, what: &str) -> Result<(u64, u64)> {
    let blocks = f.size(&format!("number of {what} blocks"))?;
    let items = f.size(&format!("number of {what}"))?;
    f.size(&format!("minimum {what} tag"))?;
    f.size(&format!("maximum {what} tag"))?;
    Ok((blocks, items))
}

/// Reads the body of `$Nodes` up to and including `$EndNodes`. Each block:
/// `entityDim entityTag parametric numNodes`, then the node tags, then the coordinates
/// (`x y z`, followed by `entityDim` parametric coordinates if `parametric` is 1).
pub(super) fn nodes(f: &mut Fields<'_, '_>, b: &mut Builder) -> Result<()> {
    f.start_binary();
    let at = f.mark();
    let (blocks, total) = header(f, "nodes")?;
    let blocks = f.count(blocks, f.min_bytes(3, 1, 0), "node blocks")?;
    let mut read: u64 = 0;
    let mut tags = Vec::new();
    for _ in 0..blocks {
        let block_at = f.mark();
        let dim = f.int("entity dimension")?;
        f.int("entity tag")?;
        let parametric = f.int("parametric flag")?;
        if !(0..=3).contains(&dim) || !(0..=1).contains(&parametric) {
            return Err(f.err_at(
                block_at,
                format!("bad node block header: entity dimension {dim}, parametric {parametric}"),
            ));
        }
        let params = (dim * parametric) as u64;
        let n = f.size("number of nodes in block")?;
        let n = f.count(n, f.min_bytes(0, 1, 3 + params), "nodes")?;
        read = read.saturating_add(n as u64);
        if read > total {
            return Err(f.err_at(
                block_at,
                format!("node blocks hold more than the {total} nodes declared"),
            ));
        }
        tags.clear();
        tags.reserve(n);
        for _ in 0..n {
            tags.push(f.size("node tag")?);
        }
        b.positions.reserve(n);
        for &tag in &tags {
            let node_at = f.mark();
            let x = f.real("x coordinate")?;
            let y = f.real("y coordinate")?;
            let z = f.real("z coordinate")?;
            for _ in 0..params {
                f.real("parametric coordinate")?;
            }
            if b.add_node(tag, Vec3::new(x, y, z)).is_err() {
                return Err(f.err_at(node_at, format!("node tag {tag} is defined twice")));
            }
        }
    }
    if read != total {
        return Err(f.err_at(
            at,
            format!("header declares {total} nodes, the blocks hold {read}"),
        ));
    }
    f.c.expect("$EndNodes")
}

/// Reads the body of `$Elements` up to and including `$EndElements`. Each block:
/// `entityDim entityTag elementType numElements`, then per element its tag and node tags.
pub(super) fn elements(
    f: &mut Fields<'_, '_>,
    b: &mut Builder,
    groups: &EntityGroups,
) -> Result<()> {
    f.start_binary();
    let at = f.mark();
    let (blocks, total) = header(f, "elements")?;
    let blocks = f.count(blocks, f.min_bytes(3, 1, 0), "element blocks")?;
    let mut read: u64 = 0;
    let mut nodes = Vec::new();
    for _ in 0..blocks {
        let block_at = f.mark();
        let dim = f.int("entity dimension")?;
        let tag = f.int("entity tag")?;
        let element_type = f.int("element type")?;
        let n = f.size("number of elements in block")?;
        read = read.saturating_add(n);
        if read > total {
            return Err(f.err_at(
                block_at,
                format!("element blocks hold more than the {total} elements declared"),
            ));
        }
        let Some(per) = nodes_per_element(element_type) else {
            if f.binary.is_some() {
                return Err(f.err_at(block_at, format!("unsupported element type {element_type}")));
            }
            // ASCII: one element per line, skipped whole.
            let n = f.count(n, 2, "elements")?;
            f.c.line_text()?;
            for _ in 0..n {
                f.c.line_text()?;
            }
            continue;
        };
        let n = f.count(n, f.min_bytes(0, 1 + per as u64, 0), "elements")?;
        let physicals = groups.get(&(dim, tag)).map_or(&[][..], Vec::as_slice);
        let kept = matches!(element_type, POINT | TRIANGLE | TETRAHEDRON);
        for _ in 0..n {
            f.size("element tag")?;
            nodes.clear();
            for _ in 0..per {
                let node_at = f.mark();
                let tag = f.size("node tag")?;
                let Some(index) = b.node(tag) else {
                    return Err(f.err_at(
                        node_at,
                        format!("element refers to undefined node tag {tag}"),
                    ));
                };
                nodes.push(index);
            }
            if kept {
                b.add_element(element_type, &nodes, physicals);
            }
        }
    }
    if read != total {
        return Err(f.err_at(
            at,
            format!("header declares {total} elements, the blocks hold {read}"),
        ));
    }
    f.c.expect("$EndElements")
}
