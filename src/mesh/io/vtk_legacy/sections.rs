//! The sections of a legacy VTK file, read through its [`Cursor`] in ASCII or BINARY mode:
//! keywords, counts, typed value blocks (`POINTS`, `CELLS` in both layouts, `CELL_TYPES`),
//! and the data sections the reader skips (`FIELD`, `METADATA`, `POINT_DATA`, `CELL_DATA`).

use crate::error::{Error, Location, Result};

use super::super::vtk_scalar::{ScalarType, Value};
use super::super::{Cursor, Endian};

/// The cursor and the file's mode.
pub(super) struct Reader<'a> {
    pub(super) c: Cursor<'a>,
    pub(super) binary: bool,
}

impl Reader<'_> {
    /// Consumes a keyword (compared case-insensitively, as VTK does).
    pub(super) fn keyword(&mut self, expected: &str) -> Result<()> {
        let token = self.c.token().map_err(|_| {
            self.c
                .err_line(format!("unexpected end of file, expected {expected}"))
        })?;
        if token.eq_ignore_ascii_case(expected) {
            Ok(())
        } else {
            Err(self
                .c
                .err_line(format!("expected {expected}, found `{token}`")))
        }
    }

    /// The next keyword, upper-cased, without consuming it (`None` at the end).
    pub(super) fn peek_keyword(&self) -> Option<String> {
        let mut probe = self.c.clone();
        probe.token().ok().map(|t| t.to_ascii_uppercase())
    }

    pub(super) fn count(&mut self, what: &str) -> Result<u64> {
        self.c.parse::<u64>(what)
    }

    pub(super) fn scalar_type(&mut self) -> Result<ScalarType> {
        let name = self.c.token()?;
        ScalarType::from_legacy(name)
            .ok_or_else(|| self.c.err_line(format!("unsupported data type `{name}`")))
    }

    /// Checks that `count` values of `ty` fit in the rest of the file and, in binary mode,
    /// moves to the start of the block (the byte after the header line's newline).
    fn begin_block(&mut self, ty: ScalarType, count: u64, what: &str) -> Result<usize> {
        if self.binary {
            self.c.skip_line_end();
        }
        let each = if self.binary { ty.size() } else { 1 };
        // In a binary block, name the byte where the block starts.
        self.c
            .check_count(count, each, &format!("{what}s"))
            .map_err(|e| match e {
                Error::Parse { message, .. } if self.binary => self.c.err_byte(message),
                e => e,
            })
    }

    /// The next value of type `ty`, and the location it was read at.
    fn value(&mut self, ty: ScalarType, what: &str) -> Result<(Value, Location)> {
        if self.binary {
            let at = Location::Byte(self.c.pos());
            let bytes = self.c.bytes(ty.size())?;
            Ok((ty.decode(bytes, Endian::Big), at))
        } else {
            let value = ty.parse_next(&mut self.c, what)?;
            Ok((value, Location::Line(self.c.line())))
        }
    }

    /// `count` finite real values.
    pub(super) fn reals(&mut self, ty: ScalarType, count: u64, what: &str) -> Result<Vec<f64>> {
        let n = self.begin_block(ty, count, what)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let (value, at) = self.value(ty, what)?;
            let x = value.real();
            if !x.is_finite() {
                return Err(Error::parse(
                    self.c.file(),
                    at,
                    format!("{what} is not finite ({x})"),
                ));
            }
            out.push(x);
        }
        Ok(out)
    }

    /// `count` non-negative integers.
    pub(super) fn indices(&mut self, ty: ScalarType, count: u64, what: &str) -> Result<Vec<usize>> {
        let n = self.begin_block(ty, count, what)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let (value, at) = self.value(ty, what)?;
            let index = value
                .int()
                .and_then(|i| usize::try_from(i).ok())
                .ok_or_else(|| {
                    Error::parse(
                        self.c.file(),
                        at,
                        format!("{what} must be a non-negative integer, found {value:?}"),
                    )
                })?;
            out.push(index);
        }
        Ok(out)
    }

    /// `count` values of type `ty`, skipped.
    pub(super) fn skip_values(&mut self, ty: ScalarType, count: u64, what: &str) -> Result<()> {
        let n = self.begin_block(ty, count, what)?;
        if self.binary {
            self.c.bytes(n * ty.size())?;
        } else {
            for _ in 0..n {
                self.c.token()?;
            }
        }
        Ok(())
    }

    /// The cells after `CELLS a b`, as start offsets (one per cell plus the end) and the
    /// connectivity, in the classic or the VTK 5.1 layout.
    pub(super) fn cells(&mut self, a: u64, b: u64) -> Result<(Vec<usize>, Vec<usize>)> {
        if self.peek_keyword().as_deref() == Some("OFFSETS") {
            self.c.token()?;
            let line = self.c.line();
            let ty = self.scalar_type()?;
            let mut offsets = self.indices(ty, a, "cell offset")?;
            self.keyword("CONNECTIVITY")?;
            let ty = self.scalar_type()?;
            let conn = self.indices(ty, b, "cell node")?;
            if offsets.is_empty() {
                offsets.push(0); // no cells
            }
            let consistent = offsets.first().is_none_or(|&o| o == 0)
                && offsets.windows(2).all(|w| w[0] <= w[1])
                && offsets.last().is_some_and(|&o| o == conn.len());
            if !consistent {
                return Err(Error::parse(
                    self.c.file(),
                    Location::Line(line),
                    "OFFSETS must start at 0, never decrease, and end at the CONNECTIVITY size",
                ));
            }
            return Ok((offsets, conn));
        }
        let line = self.c.line();
        let list = self.indices(ScalarType::I32, b, "cell list entry")?;
        let cell_count = usize::try_from(a).unwrap_or(usize::MAX).min(list.len());
        let mut starts = Vec::with_capacity(cell_count + 1);
        let mut conn = Vec::with_capacity(list.len());
        let mut pos = 0;
        for cell in 0..a {
            let Some(&npts) = list.get(pos) else {
                return Err(Error::parse(
                    self.c.file(),
                    Location::Line(line),
                    format!("CELLS claims {a} cells, but its list of size {b} ends at cell {cell}"),
                ));
            };
            let ids = list.get(pos + 1..pos + 1 + npts).ok_or_else(|| {
                Error::parse(
                    self.c.file(),
                    Location::Line(line),
                    format!("cell {cell} has {npts} nodes, past the end of the list of size {b}"),
                )
            })?;
            starts.push(conn.len());
            conn.extend_from_slice(ids);
            pos += 1 + npts;
        }
        starts.push(conn.len());
        if pos != list.len() {
            return Err(Error::parse(
                self.c.file(),
                Location::Line(line),
                format!("CELLS claims a list of size {b}, but its {a} cells use {pos}"),
            ));
        }
        Ok((starts, conn))
    }

    /// Skips `FIELD name k` and its `k` arrays.
    pub(super) fn skip_field(&mut self) -> Result<()> {
        self.c.token()?; // name
        let arrays = self.count("number of field arrays")?;
        for _ in 0..arrays {
            self.c.token()?; // array name
            let components = self.count("number of components")?;
            let tuples = self.count("number of tuples")?;
            let ty = self.scalar_type()?;
            let count = components.saturating_mul(tuples);
            self.skip_values(ty, count, "field value")?;
            if self.peek_keyword().as_deref() == Some("METADATA") {
                self.c.token()?;
                self.skip_metadata()?;
            }
        }
        Ok(())
    }

    /// Skips a `METADATA` block: lines up to the next empty line.
    pub(super) fn skip_metadata(&mut self) -> Result<()> {
        self.c.line_text()?; // rest of the METADATA line
        while !self.c.line_text()?.trim().is_empty() {}
        Ok(())
    }

    /// Skips the attribute arrays of a `POINT_DATA n` or `CELL_DATA n` section (up to the
    /// next keyword that is not an attribute).
    pub(super) fn skip_attributes(&mut self, n: u64) -> Result<()> {
        let times = |k: u64| n.saturating_mul(k);
        while let Some(word) = self.peek_keyword() {
            match word.as_str() {
                "SCALARS" => {
                    self.c.token()?;
                    self.c.token()?; // name
                    let ty = self.scalar_type()?;
                    let mut components = 1;
                    if let Some(k) = self.peek_keyword().and_then(|w| w.parse::<u64>().ok()) {
                        self.c.token()?;
                        components = k;
                    }
                    if self.peek_keyword().as_deref() == Some("LOOKUP_TABLE") {
                        self.c.token()?;
                        self.c.token()?; // table name
                    }
                    self.skip_values(ty, times(components), "scalar")?;
                }
                "COLOR_SCALARS" => {
                    self.c.token()?;
                    self.c.token()?;
                    let k = self.count("number of color components")?;
                    let ty = if self.binary {
                        ScalarType::U8
                    } else {
                        ScalarType::F32
                    };
                    self.skip_values(ty, times(k), "color component")?;
                }
                "LOOKUP_TABLE" => {
                    self.c.token()?;
                    self.c.token()?;
                    let size = self.count("lookup table size")?;
                    let ty = if self.binary {
                        ScalarType::U8
                    } else {
                        ScalarType::F32
                    };
                    self.skip_values(ty, size.saturating_mul(4), "color")?;
                }
                "VECTORS" | "NORMALS" | "TENSORS" | "TENSORS6" | "GLOBAL_IDS" | "PEDIGREE_IDS" => {
                    self.c.token()?;
                    self.c.token()?;
                    let ty = self.scalar_type()?;
                    let per = match word.as_str() {
                        "VECTORS" | "NORMALS" => 3,
                        "TENSORS" => 9,
                        "TENSORS6" => 6,
                        _ => 1,
                    };
                    self.skip_values(ty, times(per), "attribute value")?;
                }
                "TEXTURE_COORDINATES" => {
                    self.c.token()?;
                    self.c.token()?;
                    let dim = self.count("texture dimension")?;
                    let ty = self.scalar_type()?;
                    self.skip_values(ty, times(dim), "texture coordinate")?;
                }
                "FIELD" => {
                    self.c.token()?;
                    self.skip_field()?;
                }
                "METADATA" => {
                    self.c.token()?;
                    self.skip_metadata()?;
                }
                _ => break,
            }
        }
        Ok(())
    }
}
