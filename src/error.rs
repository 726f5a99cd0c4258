//! The library's error type (layer 0): bad input, parse and validation errors.
//!
//! Errors come in three channels (docs/design.md): a [`Result`] with this [`Error`] for bad
//! input, `assert!` for internal invariants, and a status inside results for numerical
//! outcomes (an iterative solve that stopped at its limit is not an error).

use std::fmt;
use std::path::PathBuf;

/// Where in an input an error was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// 1-based line of a text input.
    Line(usize),
    /// 0-based byte offset into a binary (or text) input.
    Byte(usize),
    /// The input as a whole (for example a count that does not match the file's end).
    Whole,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(l) => write!(f, "line {l}"),
            Location::Byte(b) => write!(f, "byte {b}"),
            Location::Whole => write!(f, "whole file"),
        }
    }
}

/// Every error the library returns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },
    /// A file's content is malformed: truncated, inconsistent counts, a bad number, …
    #[error("{file}: {location}: {message}")]
    Parse {
        /// The file's name (or a label for in-memory input).
        file: String,
        /// Where the problem is.
        location: Location,
        /// What is wrong.
        message: String,
    },
    /// A value is out of its valid range or inconsistent with the rest of the input
    /// (a degenerate tetrahedron, E ≤ 0, an unknown key, …). `what` names the item.
    #[error("{what}: {message}")]
    Invalid {
        /// The offending item (for example `tetrahedron 12` or `soft_body.beam.young_modulus`).
        what: String,
        /// What is wrong with it.
        message: String,
    },
}

impl Error {
    /// A [`Error::Parse`] error.
    pub fn parse(file: impl Into<String>, location: Location, message: impl Into<String>) -> Self {
        Error::Parse {
            file: file.into(),
            location,
            message: message.into(),
        }
    }

    /// An [`Error::Invalid`] error.
    pub fn invalid(what: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            what: what.into(),
            message: message.into(),
        }
    }

    /// An [`Error::Io`] error for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
