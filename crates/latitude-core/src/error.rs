//! One-line errors: `<where>: <what was expected>`, where `where` is `file:line`, a file, or
//! an option. The CLI prefixes `latitude: ` and exits 2; nothing here panics on bad input.
//! Control characters that input puts into a location or message are escaped, so the
//! message stays one printable line (a file name with a newline, an escape sequence).

use std::fmt;

use crate::text::escape_controls;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// `file:line`, `file`, or empty when the input has no location (generated graphs).
    pub location: String,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(message: impl Into<String>) -> Self {
        Error { location: String::new(), message: escape_controls(&message.into()) }
    }

    pub fn at(file: &str, line: u64, message: impl Into<String>) -> Self {
        Error { location: format!("{}:{line}", escape_controls(file)), message: escape_controls(&message.into()) }
    }

    pub fn in_file(file: &str, message: impl Into<String>) -> Self {
        Error { location: escape_controls(file), message: escape_controls(&message.into()) }
    }

    pub fn io(file: &str, err: &std::io::Error) -> Self {
        let what = match err.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            _ => err.to_string(),
        };
        Error::in_file(file, what)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = escape_controls(&self.message);
        if self.location.is_empty() {
            f.write_str(&message)
        } else {
            write!(f, "{}: {message}", escape_controls(&self.location))
        }
    }
}

impl std::error::Error for Error {}
