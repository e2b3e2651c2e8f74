//! One-line errors: `<where>: <what was expected>`, where `where` is `file:line`, a file, or
//! an option. The CLI prefixes `latitude: ` and exits 2; nothing here panics on bad input.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// `file:line`, `file`, or empty when the input has no location (generated graphs).
    pub location: String,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(message: impl Into<String>) -> Self {
        Error { location: String::new(), message: message.into() }
    }

    pub fn at(file: &str, line: u64, message: impl Into<String>) -> Self {
        Error { location: format!("{file}:{line}"), message: message.into() }
    }

    pub fn in_file(file: &str, message: impl Into<String>) -> Self {
        Error { location: file.to_string(), message: message.into() }
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
        if self.location.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.location, self.message)
        }
    }
}

impl std::error::Error for Error {}
