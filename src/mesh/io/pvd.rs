//! The ParaView collection index (`.pvd`) of a simulation's `.vtu` frames.

use std::fmt::Write as _;

use super::vtu::escape_xml;

/// A ParaView Collection file listing `frames` as `(time in s, file name of the .vtu
/// relative to the .pvd)`, in the given order. Opening it in ParaView plays the frames
/// against their times.
pub fn write_pvd(frames: &[(f64, &str)]) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n",
    );
    for (time, file) in frames {
        let _ = writeln!(
            out,
            "    <DataSet timestep=\"{time:?}\" group=\"\" part=\"0\" file=\"{}\"/>",
            escape_xml(file)
        );
    }
    out.push_str("  </Collection>\n</VTKFile>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collection_lists_every_frame_with_its_time() {
        let pvd = write_pvd(&[(0.0, "f_0.vtu"), (0.01, "f_1.vtu"), (0.02, "a&b \"2\".vtu")]);
        let doc = roxmltree::Document::parse(&pvd).unwrap();
        let root = doc.root_element();
        assert_eq!(root.attribute("type"), Some("Collection"));
        let sets: Vec<_> = root
            .descendants()
            .filter(|n| n.has_tag_name("DataSet"))
            .collect();
        assert_eq!(sets.len(), 3);
        let times: Vec<f64> = sets
            .iter()
            .map(|n| n.attribute("timestep").unwrap().parse().unwrap())
            .collect();
        assert_eq!(times, vec![0.0, 0.01, 0.02]);
        assert_eq!(sets[2].attribute("file"), Some("a&b \"2\".vtu"));
        assert!(
            sets.iter()
                .all(|n| n.parent().unwrap().has_tag_name("Collection"))
        );
    }
}
