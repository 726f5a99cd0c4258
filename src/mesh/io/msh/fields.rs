//! Reading the numbers of an MSH section in the file's encoding: whitespace-separated text
//! (ASCII files) or fixed-width native numbers (binary files: `int` is 4 bytes, `size_t`
//! and `double` are 8).

use crate::error::{Error, Location, Result};
use crate::mesh::io::{Cursor, Endian};

/// A cursor reading MSH fields either as text tokens or as binary numbers.
pub(super) struct Fields<'c, 'a> {
    /// The underlying cursor.
    pub c: &'c mut Cursor<'a>,
    /// `Some(byte order)` for a binary file, `None` for ASCII.
    pub binary: Option<Endian>,
}

impl<'a> Fields<'_, 'a> {
    /// Where the next field starts: its byte offset (binary files) or line (ASCII files).
    pub fn mark(&mut self) -> Location {
        match self.binary {
            Some(_) => Location::Byte(self.c.pos()),
            None => {
                self.c.skip_whitespace();
                Location::Line(self.c.line())
            }
        }
    }

    /// An error at `at`, a location from [`Fields::mark`].
    pub fn err_at(&self, at: Location, message: impl Into<String>) -> Error {
        Error::parse(self.c.file(), at, message)
    }

    /// A C `int` (4 bytes in binary), widened.
    pub fn int(&mut self, what: &str) -> Result<i64> {
        match self.binary {
            Some(e) => Ok(i64::from(self.c.i32(e)?)),
            None => self.c.parse(what),
        }
    }

    /// A C `int` that must be zero or positive (a tag, a count).
    pub fn non_negative_int(&mut self, what: &str) -> Result<u64> {
        let at = self.mark();
        let v = self.int(what)?;
        u64::try_from(v).map_err(|_| self.err_at(at, format!("{what} is negative ({v})")))
    }

    /// A `size_t` (8 bytes in binary; MSH 4.1 counts and tags).
    pub fn size(&mut self, what: &str) -> Result<u64> {
        match self.binary {
            Some(e) => self.c.u64(e),
            None => self.c.parse(what),
        }
    }

    /// A finite `double`.
    pub fn real(&mut self, what: &str) -> Result<f64> {
        match self.binary {
            Some(e) => {
                let at = Location::Byte(self.c.pos());
                let v = self.c.f64(e)?;
                if v.is_finite() {
                    Ok(v)
                } else {
                    Err(self.err_at(at, format!("{what} is not finite ({v})")))
                }
            }
            None => self.c.finite_f64(what),
        }
    }

    /// The least number of bytes an item of `ints` ints, `sizes` size_t's and `reals`
    /// doubles occupies in this encoding (a text token takes at least one character and one
    /// separator). Saturates instead of overflowing.
    pub fn min_bytes(&self, ints: u64, sizes: u64, reals: u64) -> usize {
        let total = match self.binary {
            Some(_) => ints
                .saturating_mul(4)
                .saturating_add(sizes.saturating_add(reals).saturating_mul(8)),
            None => ints
                .saturating_add(sizes)
                .saturating_add(reals)
                .saturating_mul(2),
        };
        usize::try_from(total).unwrap_or(usize::MAX)
    }

    /// Checks that `count` items of at least `min_bytes_each` bytes fit in the rest of the
    /// file (see [`Cursor::check_count`]); the error names the line or byte offset.
    pub fn count(&self, count: u64, min_bytes_each: usize, what: &str) -> Result<usize> {
        let at = Location::Byte(self.c.pos());
        self.c
            .check_count(count, min_bytes_each, what)
            .map_err(|e| match (self.binary, e) {
                (Some(_), Error::Parse { message, .. }) => self.err_at(at, message),
                (_, e) => e,
            })
    }

    /// Before the binary data of a section: moves past the end of the text line before it.
    pub fn start_binary(&mut self) {
        if self.binary.is_some() {
            self.c.skip_line_end();
        }
    }
}
