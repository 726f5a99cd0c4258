//! The comma-separated files of an experiment (command logs, marker tracks, point paths):
//! read as UTF-8 text, then split into a header and rows of fields with their line numbers.
//! A leading byte-order mark is dropped, `\r\n` line ends are accepted, whitespace around a
//! field is trimmed and blank lines are skipped.

use std::path::Path;

use crate::error::{Error, Location, Result};

/// Reads the file at `path` as UTF-8 text: `(name, text)`, its name as given (for messages).
/// Errors: the file cannot be read, or is not UTF-8 (naming the first bad byte).
pub(super) fn read_text(path: &Path) -> Result<(String, String)> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let file = path.display().to_string();
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::parse(
            &file,
            Location::Byte(e.utf8_error().valid_up_to()),
            "is not UTF-8 text",
        )
    })?;
    Ok((file, text))
}

/// A table's text split into its header (line 1) and its rows.
pub(super) struct CsvTable<'t> {
    /// The file's name (in errors).
    file: &'t str,
    /// The header line as written.
    pub(super) header: &'t str,
    /// The header's fields, trimmed.
    pub(super) columns: Vec<&'t str>,
    /// The whole text, without a byte-order mark.
    text: &'t str,
}

impl<'t> CsvTable<'t> {
    /// The table of `text`, the content of the file `file` (named in errors).
    pub(super) fn new(file: &'t str, text: &'t str) -> CsvTable<'t> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let header = text.lines().next().unwrap_or("");
        CsvTable {
            file,
            header,
            columns: fields(header),
            text,
        }
    }

    /// An error at line `line` of the file: `FILE: line N: message`.
    pub(super) fn error(&self, line: usize, message: String) -> Error {
        Error::parse(self.file, Location::Line(line), message)
    }

    /// Checks that the header's fields are those of `expected` (`time,x,y,z`); else the error
    /// "expected the header `EXPECTED`, got `…`" at line 1.
    pub(super) fn expect_header(&self, expected: &str) -> Result<()> {
        if self.columns != fields(expected) {
            return Err(self.error(
                1,
                format!(
                    "expected the header `{expected}`, got `{}`",
                    self.header.trim()
                ),
            ));
        }
        Ok(())
    }

    /// Checks that row `line`'s `row` has as many fields as the header `expected` it was
    /// checked against ([`Self::expect_header`]); else the error "expected N fields
    /// `EXPECTED`, got M" at that line.
    pub(super) fn expect_fields(&self, line: usize, row: &[&str], expected: &str) -> Result<()> {
        let n = expected.split(',').count();
        if row.len() != n {
            return Err(self.error(
                line,
                format!("expected {n} fields `{expected}`, got {}", row.len()),
            ));
        }
        Ok(())
    }

    /// The non-blank rows after the header: (line number from 1, fields trimmed).
    pub(super) fn rows(&self) -> impl Iterator<Item = (usize, Vec<&'t str>)> + 't {
        self.text
            .lines()
            .enumerate()
            .skip(1)
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| (i + 1, fields(l)))
    }
}

/// The comma-separated fields of `line`, trimmed.
fn fields(line: &str) -> Vec<&str> {
    line.split(',').map(str::trim).collect()
}
