//! MSH 2.2 `$Nodes` and `$Elements` sections (gmsh manual, "Legacy formats": MSH file
//! format version 2). Counts are text lines in both encodings; in binary files the nodes are
//! (int tag, 3 doubles) and the elements come in blocks headed by the ints
//! (type, number of elements, number of tags), each element being `int tag, tags…, nodes…`.

use crate::error::Result;
use crate::math::Vec3;

use super::fields::Fields;
use super::{Builder, POINT, TETRAHEDRON, TRIANGLE, nodes_per_element};

/// Reads the body of `$Nodes` (after the header token) up to and including `$EndNodes`.
pub(super) fn nodes(f: &mut Fields<'_, '_>, b: &mut Builder) -> Result<()> {
    let n: u64 = f.c.parse("number of nodes")?;
    f.start_binary();
    let n = f.count(n, f.min_bytes(1, 0, 3), "nodes")?;
    b.positions.reserve(n);
    for _ in 0..n {
        let at = f.mark();
        let tag = f.non_negative_int("node tag")?;
        let x = f.real("x coordinate")?;
        let y = f.real("y coordinate")?;
        let z = f.real("z coordinate")?;
        if b.add_node(tag, Vec3::new(x, y, z)).is_err() {
            return Err(f.err_at(at, format!("node tag {tag} is defined twice")));
        }
    }
    f.c.expect("$EndNodes")
}

/// Reads the body of `$Elements` up to and including `$EndElements`.
pub(super) fn elements(f: &mut Fields<'_, '_>, b: &mut Builder) -> Result<()> {
    let n: u64 = f.c.parse("number of elements")?;
    f.start_binary();
    // Smallest element: tag, type, number of tags, one node (ASCII) or tag and one node
    // (binary, after a block header).
    let min = f.min_bytes(if f.binary.is_some() { 2 } else { 4 }, 0, 0);
    let n = f.count(n, min, "elements")?;
    let mut nodes = Vec::new();
    let mut read = 0;
    while read < n {
        if f.binary.is_some() {
            let at = f.mark();
            let element_type = f.int("element type")?;
            let in_block = f.non_negative_int("number of elements in block")?;
            let tags = f.non_negative_int("number of tags")?;
            let Some(per) = nodes_per_element(element_type) else {
                return Err(f.err_at(at, format!("unsupported element type {element_type}")));
            };
            if in_block > (n - read) as u64 {
                return Err(f.err_at(
                    at,
                    format!(
                        "element block of {in_block} elements exceeds the {} left of the {n} declared",
                        n - read
                    ),
                ));
            }
            let ints = 1u64.saturating_add(tags).saturating_add(per as u64);
            let in_block = f.count(in_block, f.min_bytes(ints, 0, 0), "elements")?;
            for _ in 0..in_block {
                element(f, b, element_type, tags, per, &mut nodes)?;
            }
            read += in_block;
        } else {
            f.c.parse::<i64>("element tag")?;
            let element_type: i64 = f.c.parse("element type")?;
            let tags: u64 = f.c.parse("number of tags")?;
            match nodes_per_element(element_type) {
                Some(per) => element(f, b, element_type, tags, per, &mut nodes)?,
                None => {
                    f.c.line_text()?;
                }
            }
            read += 1;
        }
    }
    f.c.expect("$EndElements")
}

/// Reads one element after its type (and, in ASCII, its number of tags): tags, then `per`
/// node tags; keeps it if its type is kept. Its physical group is its first tag.
fn element(
    f: &mut Fields<'_, '_>,
    b: &mut Builder,
    element_type: i64,
    tags: u64,
    per: usize,
    nodes: &mut Vec<usize>,
) -> Result<()> {
    if f.binary.is_some() {
        f.int("element tag")?;
    }
    f.count(tags, f.min_bytes(1, 0, 0), "element tags")?;
    let mut physical = 0;
    for i in 0..tags {
        let tag = f.int("element tag value")?;
        if i == 0 {
            physical = tag;
        }
    }
    nodes.clear();
    for _ in 0..per {
        let at = f.mark();
        let tag = f.non_negative_int("node tag")?;
        let Some(index) = b.node(tag) else {
            return Err(f.err_at(at, format!("element refers to undefined node tag {tag}")));
        };
        nodes.push(index);
    }
    if matches!(element_type, POINT | TRIANGLE | TETRAHEDRON) {
        b.add_element(element_type, nodes, &[physical]);
    }
    Ok(())
}
