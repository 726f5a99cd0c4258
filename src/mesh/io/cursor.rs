//! A byte cursor over an input file shared by the readers: whitespace-separated tokens with
//! line tracking for text sections, fixed-width numbers for binary sections, and errors that
//! name the file and the line (text) or byte offset (binary).

use std::str::FromStr;

use crate::error::{Error, Location, Result};

/// Byte order of a binary section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    /// Least significant byte first (gmsh binary on x86, VTU binary from most writers).
    Little,
    /// Most significant byte first (legacy VTK binary).
    Big,
}

/// A cursor over `data`, the content of the file called `file`.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    file: &'a str,
    data: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`; `file` names it in errors.
    pub fn new(file: &'a str, data: &'a [u8]) -> Self {
        Cursor {
            file,
            data,
            pos: 0,
            line: 1,
        }
    }

    /// The same cursor with its current line numbered `line`: for a text embedded in a
    /// bigger file (an XML element's content), so errors name the line in the whole file.
    pub fn with_line(mut self, line: usize) -> Self {
        self.line = line;
        self
    }

    /// The file name given at construction.
    pub fn file(&self) -> &'a str {
        self.file
    }

    /// Current byte offset.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Current 1-based line (counting the newlines consumed so far).
    pub fn line(&self) -> usize {
        self.line
    }

    /// Bytes left after the cursor.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// The unread bytes.
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// A parse error at the current line.
    pub fn err_line(&self, message: impl Into<String>) -> Error {
        Error::parse(self.file, Location::Line(self.line), message)
    }

    /// A parse error at the current byte offset.
    pub fn err_byte(&self, message: impl Into<String>) -> Error {
        Error::parse(self.file, Location::Byte(self.pos), message)
    }

    /// Skips spaces, tabs, carriage returns and newlines.
    pub fn skip_whitespace(&mut self) {
        while let Some(&b) = self.data.get(self.pos) {
            if b == b'\n' {
                self.line += 1;
            } else if !b.is_ascii_whitespace() {
                break;
            }
            self.pos += 1;
        }
    }

    /// Whether only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.skip_whitespace();
        self.pos >= self.data.len()
    }

    /// The next whitespace-separated token. Errors at the end of the input or on a token that
    /// is not UTF-8.
    pub fn token(&mut self) -> Result<&'a str> {
        self.skip_whitespace();
        let start = self.pos;
        while self
            .data
            .get(self.pos)
            .is_some_and(|b| !b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.err_line("unexpected end of file"));
        }
        std::str::from_utf8(&self.data[start..self.pos])
            .map_err(|_| self.err_line("token is not valid text"))
    }

    /// The next token parsed as a `T`; `what` names the expected value in the error.
    pub fn parse<T: FromStr>(&mut self, what: &str) -> Result<T> {
        let token = self
            .token()
            .map_err(|_| self.err_line(format!("unexpected end of file, expected {what}")))?;
        token
            .parse()
            .map_err(|_| self.err_line(format!("expected {what}, found `{}`", truncate(token))))
    }

    /// The next token as a finite `f64` (NaN and infinities are errors naming `what`).
    pub fn finite_f64(&mut self, what: &str) -> Result<f64> {
        let value: f64 = self.parse(what)?;
        if value.is_finite() {
            Ok(value)
        } else {
            Err(self.err_line(format!("{what} is not finite ({value})")))
        }
    }

    /// Consumes the next token and checks it equals `expected`.
    pub fn expect(&mut self, expected: &str) -> Result<()> {
        let token = self
            .token()
            .map_err(|_| self.err_line(format!("unexpected end of file, expected `{expected}`")))?;
        if token == expected {
            Ok(())
        } else {
            Err(self.err_line(format!(
                "expected `{expected}`, found `{}`",
                truncate(token)
            )))
        }
    }

    /// The rest of the current line (without its line ending), moving past the newline.
    pub fn line_text(&mut self) -> Result<&'a str> {
        let start = self.pos;
        let end = self.data[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(self.data.len(), |i| start + i);
        let text = std::str::from_utf8(&self.data[start..end])
            .map_err(|_| self.err_line("line is not valid text"))?;
        self.pos = end;
        if self.pos < self.data.len() {
            self.pos += 1;
            self.line += 1;
        }
        Ok(text.trim_end_matches('\r'))
    }

    /// Moves past the rest of the current line, if only whitespace is left on it (used after
    /// a text header before a binary block, which starts right after the newline).
    pub fn skip_line_end(&mut self) {
        while let Some(&b) = self.data.get(self.pos) {
            if b == b'\n' {
                self.pos += 1;
                self.line += 1;
                return;
            }
            if !b.is_ascii_whitespace() {
                return;
            }
            self.pos += 1;
        }
    }

    /// Moves past the next occurrence of `needle` (searching raw bytes, so it also crosses
    /// binary data). Returns `false`, leaving the cursor unmoved, when `needle` does not occur.
    pub fn skip_past(&mut self, needle: &[u8]) -> bool {
        if needle.is_empty() {
            return true;
        }
        match self.rest().windows(needle.len()).position(|w| w == needle) {
            Some(i) => {
                let end = self.pos + i + needle.len();
                self.line += self.data[self.pos..end]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
                self.pos = end;
                true
            }
            None => false,
        }
    }

    /// The next `n` raw bytes. Errors when fewer are left (a truncated binary block).
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.err_byte(format!(
                "truncated: {n} bytes expected, {} left",
                self.remaining()
            )));
        }
        let out = &self.data[self.pos..self.pos + n];
        self.line += out.iter().filter(|&&b| b == b'\n').count();
        self.pos += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let b = self.bytes(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        Ok(a)
    }

    /// A binary `f64`.
    pub fn f64(&mut self, endian: Endian) -> Result<f64> {
        let a = self.array::<8>()?;
        Ok(match endian {
            Endian::Little => f64::from_le_bytes(a),
            Endian::Big => f64::from_be_bytes(a),
        })
    }

    /// A binary `f32`, widened.
    pub fn f32(&mut self, endian: Endian) -> Result<f64> {
        let a = self.array::<4>()?;
        Ok(f64::from(match endian {
            Endian::Little => f32::from_le_bytes(a),
            Endian::Big => f32::from_be_bytes(a),
        }))
    }

    /// A binary `i32`.
    pub fn i32(&mut self, endian: Endian) -> Result<i32> {
        let a = self.array::<4>()?;
        Ok(match endian {
            Endian::Little => i32::from_le_bytes(a),
            Endian::Big => i32::from_be_bytes(a),
        })
    }

    /// A binary `u64`.
    pub fn u64(&mut self, endian: Endian) -> Result<u64> {
        let a = self.array::<8>()?;
        Ok(match endian {
            Endian::Little => u64::from_le_bytes(a),
            Endian::Big => u64::from_be_bytes(a),
        })
    }

    /// A binary `i64`.
    pub fn i64(&mut self, endian: Endian) -> Result<i64> {
        Ok(self.u64(endian)? as i64)
    }

    /// Checks that a count read from the file is backed by the file: `count` items of at least
    /// `min_bytes_each` bytes must fit in what is left. Returns the count as `usize`. Call it
    /// before any allocation sized by `count`, so a lying header cannot make us allocate.
    pub fn check_count(&self, count: u64, min_bytes_each: usize, what: &str) -> Result<usize> {
        let needed = count.checked_mul(min_bytes_each.max(1) as u64);
        match needed {
            Some(n) if n <= self.remaining() as u64 => Ok(count as usize),
            _ => Err(self.err_line(format!(
                "header claims {count} {what}, more than the {} bytes left in the file can hold",
                self.remaining()
            ))),
        }
    }
}

/// At most 40 characters of a token, for error messages.
fn truncate(token: &str) -> String {
    if token.chars().count() <= 40 {
        token.to_string()
    } else {
        format!("{}…", token.chars().take(40).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_lines_and_numbers() {
        let mut c = Cursor::new("t.txt", b"  12 abc\r\n 3.5\n\n nan x");
        assert_eq!(c.parse::<u32>("count").unwrap(), 12);
        assert_eq!(c.token().unwrap(), "abc");
        assert_eq!(c.finite_f64("x").unwrap(), 3.5);
        assert_eq!(c.line(), 2);
        let err = c.finite_f64("coordinate").unwrap_err().to_string();
        assert_eq!(err, "t.txt: line 4: coordinate is not finite (NaN)");
        let err = c.parse::<u32>("node tag").unwrap_err().to_string();
        assert_eq!(err, "t.txt: line 4: expected node tag, found `x`");
        let err = c.token().unwrap_err().to_string();
        assert_eq!(err, "t.txt: line 4: unexpected end of file");
    }

    #[test]
    fn binary_reads_and_truncation() {
        let mut data = 1.5f64.to_be_bytes().to_vec();
        data.extend(7i32.to_le_bytes());
        let mut c = Cursor::new("b.bin", &data);
        assert_eq!(c.f64(Endian::Big).unwrap(), 1.5);
        assert_eq!(c.i32(Endian::Little).unwrap(), 7);
        assert_eq!(
            c.f64(Endian::Little).unwrap_err().to_string(),
            "b.bin: byte 12: truncated: 8 bytes expected, 0 left"
        );
    }

    #[test]
    fn skip_past_crosses_binary_and_counts_lines() {
        let mut c = Cursor::new("s.msh", b"$Foo\n\x00\xff\n$EndFoo\n$Nodes");
        assert!(c.skip_past(b"$EndFoo"));
        assert_eq!(c.line(), 3);
        assert_eq!(c.token().unwrap(), "$Nodes");
        assert!(!c.skip_past(b"$EndBar"));
        assert_eq!(c.pos(), 22);
    }

    #[test]
    fn counts_must_be_backed_by_the_file() {
        let c = Cursor::new("h.msh", &[0u8; 1000]);
        assert_eq!(c.check_count(10, 24, "nodes").unwrap(), 10);
        assert!(c.check_count(1_000_000_000_000, 24, "nodes").is_err());
        assert!(c.check_count(u64::MAX, 24, "nodes").is_err());
    }
}
