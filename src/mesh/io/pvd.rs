//! The ParaView collection index (`.pvd`) of a simulation's `.vtu` frames: its writer and
//! its reader.

use std::fmt::Write as _;

use crate::error::{Error, Location, Result};

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

/// The frames listed by the ParaView Collection `text` (the content of the file called
/// `file`), as `(time in s, file name relative to the .pvd)`, in the file's order: every
/// `<DataSet>` must have a numeric `timestep` and a `file`.
pub fn read_pvd(file: &str, text: &str) -> Result<Vec<(f64, String)>> {
    let doc = roxmltree::Document::parse(text).map_err(|e| {
        Error::parse(
            file,
            Location::Line(e.pos().row as usize),
            format!("invalid XML: {e}"),
        )
    })?;
    let root = doc.root_element();
    if !root.has_tag_name("VTKFile") || root.attribute("type") != Some("Collection") {
        return Err(Error::parse(
            file,
            Location::Line(1),
            "not a ParaView collection (<VTKFile type=\"Collection\">)",
        ));
    }
    let mut frames = Vec::new();
    for set in root.descendants().filter(|n| n.has_tag_name("DataSet")) {
        let line = Location::Line(doc.text_pos_at(set.range().start).row as usize);
        let time = set.attribute("timestep").unwrap_or("0");
        let time: f64 = time.trim().parse().map_err(|_| {
            Error::parse(file, line, format!("timestep=\"{time}\" is not a number"))
        })?;
        let name = set
            .attribute("file")
            .ok_or_else(|| Error::parse(file, line, "<DataSet> has no `file` attribute"))?;
        frames.push((time, name.to_string()));
    }
    Ok(frames)
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

    #[test]
    fn reader_gives_back_what_the_writer_listed() {
        let frames = [(0.0, "f_0.vtu"), (0.01, "f_1.vtu"), (0.02, "a&b \"2\".vtu")];
        let read = read_pvd("t.pvd", &write_pvd(&frames)).unwrap();
        let expected: Vec<(f64, String)> =
            frames.iter().map(|(t, n)| (*t, n.to_string())).collect();
        assert_eq!(read, expected);
        let err = read_pvd("t.pvd", "<VTKFile type=\"UnstructuredGrid\"/>").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("t.pvd: line 1: not a ParaView collection"),
            "{err}"
        );
    }
}
