//! Unit tests of the MSH reader on inline files: one tetrahedron on sparse node tags with a
//! triangle, a line and a point element, in the four variants, and one test per error case.

use super::read_msh;
use crate::error::{Error, Location};
use crate::mesh::Mesh;

/// MSH 2.2 ASCII: nodes tagged 10, 20, 30, 40 and 99 (99 in no element); a point element on
/// node 10 in unnamed physical 4, a line (dropped), a triangle in "clamp", a tetrahedron in
/// "body".
const V22_ASCII: &str = "$MeshFormat
2.2 0 8
$EndMeshFormat
$PhysicalNames
2
3 1 \"body\"
2 2 \"clamp\"
$EndPhysicalNames
$Nodes
5
10 0 0 0
20 1 0 0
30 0 1 0
40 0 0 1
99 5 5 5
$EndNodes
$Elements
4
1 15 2 4 1 10
2 1 2 0 1 10 20
3 2 2 2 1 10 20 30
4 4 2 1 1 10 20 30 40
$EndElements
";

/// The same mesh in MSH 4.1 ASCII; the volume entity carries two physical groups (1 "body"
/// and the unnamed 3), a `$Comments` section is to be skipped.
const V41_ASCII: &str = "$MeshFormat
4.1 0 8
$EndMeshFormat
$Comments
$Nodes is not a section here
$EndComments
$PhysicalNames
2
3 1 \"body\"
2 2 \"clamp\"
$EndPhysicalNames
$Entities
1 0 1 1
1 0 0 0 1 4
1 0 0 0 1 1 0 1 2 0
1 0 0 0 1 1 1 2 1 3 1 1
$EndEntities
$Nodes
2 5 10 99
0 1 0 1
10
0 0 0
3 1 0 4
20
30
40
99
1 0 0
0 1 0
0 0 1
5 5 5
$EndNodes
$Elements
3 3 1 3
0 1 15 1
1 10
2 1 2 1
2 10 20 30
3 1 4 1
3 10 20 30 40
$EndElements
";

const NODES: [(i32, [f64; 3]); 5] = [
    (10, [0.0, 0.0, 0.0]),
    (20, [1.0, 0.0, 0.0]),
    (30, [0.0, 1.0, 0.0]),
    (40, [0.0, 0.0, 1.0]),
    (99, [5.0, 5.0, 5.0]),
];

/// Native binary numbers, little- or big-endian.
struct Bin {
    v: Vec<u8>,
    big: bool,
}

impl Bin {
    fn new(big: bool) -> Self {
        Bin { v: Vec::new(), big }
    }
    fn t(&mut self, s: &str) -> &mut Self {
        self.v.extend_from_slice(s.as_bytes());
        self
    }
    fn i(&mut self, x: i32) -> &mut Self {
        let b = if self.big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        };
        self.v.extend_from_slice(&b);
        self
    }
    fn s(&mut self, x: u64) -> &mut Self {
        let b = if self.big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        };
        self.v.extend_from_slice(&b);
        self
    }
    fn d(&mut self, x: f64) -> &mut Self {
        let b = if self.big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        };
        self.v.extend_from_slice(&b);
        self
    }
}

const NAMES: &str = "$PhysicalNames\n2\n3 1 \"body\"\n2 2 \"clamp\"\n$EndPhysicalNames\n";

/// Knobs to break the binary files.
#[derive(Clone, Copy)]
struct Knobs {
    big: bool,
    marker: i32,
    node_count: u64,
    x_of_node_20: f64,
    last_tet_node: u64,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            big: false,
            marker: 1,
            node_count: 5,
            x_of_node_20: 1.0,
            last_tet_node: 40,
        }
    }
}

fn coords(i: usize, k: &Knobs) -> [f64; 3] {
    let (tag, mut p) = NODES[i];
    if tag == 20 {
        p[0] = k.x_of_node_20;
    }
    p
}

/// [`V22_ASCII`] as MSH 2.2 binary.
fn v22_binary(k: Knobs) -> Vec<u8> {
    let mut b = Bin::new(k.big);
    b.t("$MeshFormat\n2.2 1 8\n")
        .i(k.marker)
        .t("\n$EndMeshFormat\n");
    b.t(NAMES).t(&format!("$Nodes\n{}\n", k.node_count));
    for (i, &(tag, _)) in NODES.iter().enumerate() {
        let p = coords(i, &k);
        b.i(tag).d(p[0]).d(p[1]).d(p[2]);
    }
    b.t("\n$EndNodes\n$Elements\n4\n");
    b.i(15).i(1).i(2).i(1).i(4).i(1).i(10);
    b.i(1).i(1).i(2).i(2).i(0).i(1).i(10).i(20);
    b.i(2).i(1).i(2).i(3).i(2).i(1).i(10).i(20).i(30);
    b.i(4).i(1).i(2).i(4).i(1).i(1).i(10).i(20).i(30);
    b.i(k.last_tet_node as i32).t("\n$EndElements\n");
    b.v
}

/// [`V41_ASCII`] as MSH 4.1 binary.
fn v41_binary(k: Knobs) -> Vec<u8> {
    let mut b = Bin::new(k.big);
    b.t("$MeshFormat\n4.1 1 8\n")
        .i(k.marker)
        .t("\n$EndMeshFormat\n")
        .t(NAMES);
    b.t("$Entities\n").s(1).s(0).s(1).s(1);
    b.i(1).d(0.0).d(0.0).d(0.0).s(1).i(4);
    b.i(1)
        .d(0.0)
        .d(0.0)
        .d(0.0)
        .d(1.0)
        .d(1.0)
        .d(0.0)
        .s(1)
        .i(2)
        .s(0);
    b.i(1)
        .d(0.0)
        .d(0.0)
        .d(0.0)
        .d(1.0)
        .d(1.0)
        .d(1.0)
        .s(2)
        .i(1)
        .i(3)
        .s(1)
        .i(1);
    b.t("\n$EndEntities\n$Nodes\n")
        .s(2)
        .s(k.node_count)
        .s(10)
        .s(99);
    b.i(0).i(1).i(0).s(1).s(10).d(0.0).d(0.0).d(0.0);
    b.i(3).i(1).i(0).s(4).s(20).s(30).s(40).s(99);
    for i in 1..5 {
        let p = coords(i, &k);
        b.d(p[0]).d(p[1]).d(p[2]);
    }
    b.t("\n$EndNodes\n$Elements\n").s(3).s(3).s(1).s(3);
    b.i(0).i(1).i(15).s(1).s(1).s(10);
    b.i(2).i(1).i(2).s(1).s(2).s(10).s(20).s(30);
    b.i(3)
        .i(1)
        .i(4)
        .s(1)
        .s(3)
        .s(10)
        .s(20)
        .s(30)
        .s(k.last_tet_node);
    b.t("\n$EndElements\n");
    b.v
}

fn read(data: &[u8]) -> crate::Result<Mesh> {
    read_msh("t.msh", data)
}

/// The parse error's location and message; panics on success or another error kind.
fn parse_err(data: &[u8]) -> (Location, String) {
    match read(data) {
        Err(Error::Parse {
            file,
            location,
            message,
        }) => {
            assert_eq!(file, "t.msh");
            (location, message)
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

fn assert_the_tetrahedron(m: &Mesh) {
    let want: Vec<_> = NODES.iter().map(|(_, p)| *p).collect();
    let got: Vec<_> = m.positions().iter().map(|p| [p.x, p.y, p.z]).collect();
    assert_eq!(got, want);
    assert_eq!(m.tetrahedra(), &[[0, 1, 2, 3]]);
    assert_eq!(m.triangles(), &[[0, 1, 2]]);
    let g = m.groups();
    assert_eq!(g.tetrahedra.get("body"), Some(&vec![0]));
    assert_eq!(g.triangles.get("clamp"), Some(&vec![0]));
    assert_eq!(g.nodes.get("4"), Some(&vec![0]));
    assert_eq!(g.nodes.len() + g.triangles.len(), 2);
}

#[test]
fn all_variants_read_the_same_tetrahedron() {
    let a22 = read(V22_ASCII.as_bytes()).unwrap();
    assert_the_tetrahedron(&a22);
    assert_eq!(a22.groups().tetrahedra.len(), 1);
    let a41 = read(V41_ASCII.as_bytes()).unwrap();
    assert_the_tetrahedron(&a41);
    // The 4.1 volume entity is also in the unnamed physical group 3.
    assert_eq!(a41.groups().tetrahedra.get("3"), Some(&vec![0]));
    for big in [false, true] {
        let k = Knobs {
            big,
            ..Knobs::default()
        };
        assert_eq!(
            read(&v22_binary(k)).unwrap(),
            a22,
            "2.2 binary, big-endian {big}"
        );
        assert_eq!(
            read(&v41_binary(k)).unwrap(),
            a41,
            "4.1 binary, big-endian {big}"
        );
    }
}

#[test]
fn negatively_oriented_tetrahedra_are_flipped_and_repeats_merged() {
    // 2.2 repeats an element once per physical group: the same tetrahedron (nodes listed in
    // another order, negatively oriented) in groups 1 and 3.
    let text = V22_ASCII.replace(
        "4\n1 15 2 4 1 10\n2 1 2 0 1 10 20\n3 2 2 2 1 10 20 30\n4 4 2 1 1 10 20 30 40\n",
        "2\n4 4 2 1 1 20 10 30 40\n5 4 2 3 1 10 20 30 40\n",
    );
    let m = read(text.as_bytes()).unwrap();
    assert_eq!(m.tetrahedra(), &[[1, 0, 3, 2]]);
    assert_eq!(m.groups().tetrahedra.get("body"), Some(&vec![0]));
    assert_eq!(m.groups().tetrahedra.get("3"), Some(&vec![0]));
    assert!((m.volume() - 1.0 / 6.0).abs() < 1e-15);
}

#[test]
fn unsupported_versions_are_refused() {
    for v in ["3.0", "1.0", "4.0", "2.1"] {
        let text = V22_ASCII.replace("2.2 0 8", &format!("{v} 0 8"));
        let (loc, msg) = parse_err(text.as_bytes());
        assert_eq!(loc, Location::Line(2));
        assert_eq!(
            msg,
            format!("unsupported MSH version {v}; this reader handles 2.2 and 4.1")
        );
    }
}

#[test]
fn unsupported_data_size_and_file_type_are_refused() {
    let (loc, msg) = parse_err(V41_ASCII.replace("4.1 0 8", "4.1 0 4").as_bytes());
    assert_eq!(loc, Location::Line(2));
    assert!(msg.starts_with("unsupported data size 4"), "{msg}");
    let (_, msg) = parse_err(V41_ASCII.replace("4.1 0 8", "4.1 2 8").as_bytes());
    assert!(msg.starts_with("unsupported file type 2"), "{msg}");
}

#[test]
fn bad_endianness_marker_is_refused() {
    let k = Knobs {
        marker: 7,
        ..Knobs::default()
    };
    for data in [v22_binary(k), v41_binary(k)] {
        let (loc, msg) = parse_err(&data);
        assert_eq!(loc, Location::Byte(20));
        assert!(msg.starts_with("bad endianness marker"), "{msg}");
    }
}

#[test]
fn truncated_files_are_refused() {
    // ASCII: cut in the middle of the node list.
    let text = &V22_ASCII[..V22_ASCII.find("4 4 2 1 1").unwrap()];
    let (loc, msg) = parse_err(text.as_bytes());
    assert_eq!(loc, Location::Line(22));
    assert!(msg.contains("unexpected end of file"), "{msg}");
    // Binary: cut inside the coordinates of the last node block / the element data.
    for data in [v22_binary(Knobs::default()), v41_binary(Knobs::default())] {
        for cut in [data.len() / 2, data.len() - 30] {
            let (loc, msg) = parse_err(&data[..cut]);
            assert!(
                matches!(loc, Location::Byte(_) | Location::Line(_)),
                "{loc:?}"
            );
            let truncated = ["truncated", "end of file", "header claims"];
            assert!(truncated.iter().any(|t| msg.contains(t)), "{msg}");
        }
    }
    // Nothing after the header.
    let (_, msg) = parse_err(b"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n");
    assert_eq!(msg, "no `$Nodes` section");
    let (_, msg) = parse_err(b"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n0 0 0 0\n$EndNodes\n");
    assert_eq!(msg, "no `$Elements` section");
}

#[test]
fn node_counts_that_do_not_match_the_data_are_refused() {
    // 2.2: six nodes declared, five follow.
    let (loc, msg) = parse_err(V22_ASCII.replace("$Nodes\n5\n", "$Nodes\n6\n").as_bytes());
    assert_eq!(loc, Location::Line(16));
    assert_eq!(msg, "expected node tag, found `$EndNodes`");
    // 2.2: four declared, five follow.
    let (loc, msg) = parse_err(V22_ASCII.replace("$Nodes\n5\n", "$Nodes\n4\n").as_bytes());
    assert_eq!(loc, Location::Line(15));
    assert_eq!(msg, "expected `$EndNodes`, found `99`");
    // `$EndNodes` missing.
    let (_, msg) = parse_err(V22_ASCII.replace("$EndNodes\n", "").as_bytes());
    assert_eq!(msg, "expected `$EndNodes`, found `$Elements`");
    // 4.1: the header total disagrees with the blocks.
    let (loc, msg) = parse_err(V41_ASCII.replace("2 5 10 99", "2 6 10 99").as_bytes());
    assert_eq!(loc, Location::Line(19));
    assert_eq!(msg, "header declares 6 nodes, the blocks hold 5");
    let (_, msg) = parse_err(V41_ASCII.replace("2 5 10 99", "2 4 10 99").as_bytes());
    assert_eq!(msg, "node blocks hold more than the 4 nodes declared");
    // 4.1 binary: the same, byte offsets.
    let (loc, msg) = parse_err(&v41_binary(Knobs {
        node_count: 6,
        ..Knobs::default()
    }));
    assert!(matches!(loc, Location::Byte(_)));
    assert_eq!(msg, "header declares 6 nodes, the blocks hold 5");
    // 2.2 binary: one more node declared than written: the parser reads into `$EndNodes`.
    let data = v22_binary(Knobs {
        node_count: 6,
        ..Knobs::default()
    });
    assert!(read(&data).is_err());
}

#[test]
fn element_counts_that_do_not_match_the_data_are_refused() {
    let (_, msg) = parse_err(
        V22_ASCII
            .replace("$Elements\n4\n", "$Elements\n5\n")
            .as_bytes(),
    );
    assert_eq!(msg, "expected element tag, found `$EndElements`");
    let (_, msg) = parse_err(V41_ASCII.replace("3 3 1 3", "3 4 1 3").as_bytes());
    assert_eq!(msg, "header declares 4 elements, the blocks hold 3");
    // 2.2 binary: a block claiming more elements than the section declares.
    let mut data = v22_binary(Knobs::default());
    let at = data.windows(9).position(|w| w == b"$Elements").unwrap() + 12;
    data[at + 4] = 9; // the first block's count: 9 elements of the 4 declared
    let (loc, msg) = parse_err(&data);
    assert_eq!(loc, Location::Byte(at));
    assert_eq!(
        msg,
        "element block of 9 elements exceeds the 4 left of the 4 declared"
    );
}

#[test]
fn undefined_node_tags_are_refused() {
    let (loc, msg) = parse_err(V22_ASCII.replace("10 20 30 40", "10 20 30 77").as_bytes());
    assert_eq!(loc, Location::Line(22));
    assert_eq!(msg, "element refers to undefined node tag 77");
    let (loc, msg) = parse_err(
        V41_ASCII
            .replace("3 10 20 30 40", "3 10 20 30 77")
            .as_bytes(),
    );
    assert_eq!(loc, Location::Line(40));
    assert_eq!(msg, "element refers to undefined node tag 77");
    let k = Knobs {
        last_tet_node: 77,
        ..Knobs::default()
    };
    for data in [v22_binary(k), v41_binary(k)] {
        let (loc, msg) = parse_err(&data);
        let width = if data.starts_with(b"$MeshFormat\n2.2") {
            4
        } else {
            8
        };
        let end = data.len() - "\n$EndElements\n".len();
        assert_eq!(loc, Location::Byte(end - width));
        assert_eq!(msg, "element refers to undefined node tag 77");
    }
}

#[test]
fn non_finite_coordinates_are_refused() {
    for bad in ["nan", "inf", "-inf", "1e999"] {
        let text = V22_ASCII.replace("20 1 0 0", &format!("20 {bad} 0 0"));
        let (loc, msg) = parse_err(text.as_bytes());
        assert_eq!(loc, Location::Line(12));
        assert!(msg.starts_with("x coordinate is not finite"), "{msg}");
    }
    for x in [f64::NAN, f64::INFINITY] {
        let k = Knobs {
            x_of_node_20: x,
            ..Knobs::default()
        };
        for data in [v22_binary(k), v41_binary(k)] {
            let (loc, msg) = parse_err(&data);
            assert!(matches!(loc, Location::Byte(_)));
            assert!(msg.starts_with("x coordinate is not finite"), "{msg}");
        }
    }
}

#[test]
fn counts_the_file_cannot_hold_are_refused_before_allocating() {
    let huge = 1_000_000_000_000u64;
    let (loc, msg) = parse_err(
        V22_ASCII
            .replace("$Nodes\n5\n", &format!("$Nodes\n{huge}\n"))
            .as_bytes(),
    );
    assert_eq!(loc, Location::Line(10));
    assert!(
        msg.starts_with(&format!("header claims {huge} nodes")),
        "{msg}"
    );
    let text = V41_ASCII.replace("3 1 0 4\n", &format!("3 1 0 {huge}\n"));
    let (_, msg) = parse_err(text.as_bytes());
    assert!(
        msg.starts_with("header claims") || msg.contains("more than"),
        "{msg}"
    );
    let (_, msg) = parse_err(
        V41_ASCII
            .replace("2 5 10 99", &format!("{huge} 5 10 99"))
            .as_bytes(),
    );
    assert!(
        msg.starts_with(&format!("header claims {huge} node blocks")),
        "{msg}"
    );
    let (_, msg) = parse_err(
        V41_ASCII
            .replace("1 0 1 1\n", &format!("1 0 1 {huge}\n"))
            .as_bytes(),
    );
    assert!(
        msg.starts_with(&format!("header claims {huge} entities")),
        "{msg}"
    );
    // Binary 4.1: a node block of u64::MAX nodes.
    let mut data = v41_binary(Knobs::default());
    let at = data.windows(7).position(|w| w == b"$Nodes\n").unwrap() + 7 + 32 + 12;
    data[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let (loc, msg) = parse_err(&data);
    assert_eq!(loc, Location::Byte(at + 8));
    assert!(
        msg.starts_with(&format!("header claims {} nodes", u64::MAX)),
        "{msg}"
    );
    // Binary 2.2: 10^12 nodes in a small file.
    let data = v22_binary(Knobs {
        node_count: huge,
        ..Knobs::default()
    });
    let (_, msg) = parse_err(&data);
    assert!(
        msg.starts_with(&format!("header claims {huge} nodes")),
        "{msg}"
    );
}

#[test]
fn duplicate_node_tags_are_refused() {
    let (loc, msg) = parse_err(V22_ASCII.replace("99 5 5 5", "30 5 5 5").as_bytes());
    assert_eq!(loc, Location::Line(15));
    assert_eq!(msg, "node tag 30 is defined twice");
}

#[test]
fn section_structure_errors_are_refused() {
    let (loc, msg) = parse_err(
        V22_ASCII
            .replace("$EndComments", "")
            .replace("$PhysicalNames\n2", "$Foo\n2")
            .as_bytes(),
    );
    assert_eq!(loc, Location::Line(4));
    assert_eq!(msg, "section `$Foo` has no `$EndFoo`");
    let (_, msg) = parse_err(format!("{V22_ASCII}$Nodes\n0\n$EndNodes\n").as_bytes());
    assert_eq!(msg, "second `$Nodes` section");
    let swapped = V22_ASCII
        .replace("$Nodes", "$Tmp")
        .replace("$EndNodes", "$EndTmp");
    let swapped = swapped
        .replace("$Elements", "$Nodes")
        .replace("$EndElements", "$EndNodes");
    assert!(read(swapped.as_bytes()).is_err());
    let long = format!("{V22_ASCII}${}\n", "A".repeat(65));
    let (_, msg) = parse_err(long.as_bytes());
    assert!(msg.starts_with("expected a section header such as `$Nodes`, found `$AAA"));
    let (_, msg) = parse_err(format!("{V22_ASCII}stray").as_bytes());
    assert_eq!(
        msg,
        "expected a section header such as `$Nodes`, found `stray`"
    );
    let only = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Elements\n0\n$EndElements\n";
    let (_, msg) = parse_err(only.as_bytes());
    assert_eq!(msg, "`$Elements` section before `$Nodes`");
}

#[test]
fn unsupported_element_types_in_binary_are_refused() {
    let mut data = v22_binary(Knobs::default());
    let at = data.windows(9).position(|w| w == b"$Elements").unwrap() + 12;
    data[at] = 34; // polygon: variable node count
    let (loc, msg) = parse_err(&data);
    assert_eq!(loc, Location::Byte(at));
    assert_eq!(msg, "unsupported element type 34");
}

#[test]
fn degenerate_tetrahedra_are_invalid_naming_the_file() {
    let text = V22_ASCII.replace("40 0 0 1", "40 1 1 0");
    match read(text.as_bytes()) {
        Err(Error::Invalid { what, message }) => {
            assert_eq!(what, "t.msh: tetrahedron 0");
            assert!(message.contains("degenerate"), "{message}");
        }
        other => panic!("expected an invalid-mesh error, got {other:?}"),
    }
}
