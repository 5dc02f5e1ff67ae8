//! The crate's one error type. Every error carries a stable machine `code` (what callers switch on), a
//! `kind` that fixes the exit status class, and optional `path` / `expected` / `observed` context.

use serde::Serialize;
use std::fmt;

/// The exit-status class of an error (see the CLI contract: 2 input, 3 absent, 1 internal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Bad input or a contract violation: unreadable, truncated, garbage or unsupported files.
    Input,
    /// A needed external tool or hardware is absent.
    Absent,
    /// A defect in gpuopt itself.
    Internal,
}

/// Stable error codes. Strings, not numbers, so that JSON consumers read them without a table.
pub mod codes {
    pub const FILE_NOT_FOUND: &str = "file_not_found";
    pub const FILE_UNREADABLE: &str = "file_unreadable";
    pub const FILE_CHANGED_DURING_READ: &str = "file_changed_during_read";
    pub const NOT_A_FILE: &str = "not_a_file";
    /// A regular file larger than the reader's cap (the same code as the Python layer's).
    pub const INPUT_TOO_LARGE: &str = "input_too_large";
    pub const INTERNAL_PANIC: &str = "internal_panic";
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Error {
    pub kind: ErrorKind,
    pub code: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn input(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Input, code, message)
    }

    pub fn absent(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Absent, code, message)
    }

    pub fn internal(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, code, message)
    }

    fn new(kind: ErrorKind, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind,
            code,
            message: message.into(),
            path: None,
            expected: None,
            observed: None,
        }
    }

    #[must_use]
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The error naming `path` unless it names a file already: errors found in the data of a file
    /// opened earlier (a NULL, an inverted interval) are made where the file's name is not at hand.
    #[must_use]
    pub fn or_path(mut self, path: impl FnOnce() -> String) -> Self {
        if self.path.is_none() {
            self.path = Some(path());
        }
        self
    }

    #[must_use]
    pub fn with_expected(mut self, expected: impl Into<String>) -> Self {
        self.expected = Some(expected.into());
        self
    }

    #[must_use]
    pub fn with_observed(mut self, observed: impl Into<String>) -> Self {
        self.observed = Some(observed.into());
        self
    }

    /// Maps an I/O error on `path` to the matching input error.
    pub fn io(path: &std::path::Path, err: &std::io::Error) -> Self {
        let shown = path.display().to_string();
        let code = match err.kind() {
            std::io::ErrorKind::NotFound => codes::FILE_NOT_FOUND,
            _ => codes::FILE_UNREADABLE,
        };
        Self::input(code, format!("{shown}: {err}")).with_path(shown)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_not_found_is_input_error_with_path() {
        let err = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let e = Error::io(std::path::Path::new("/x/y"), &err);
        assert_eq!(e.kind, ErrorKind::Input);
        assert_eq!(e.code, codes::FILE_NOT_FOUND);
        assert_eq!(e.path.as_deref(), Some("/x/y"));
    }

    #[test]
    fn serializes_without_empty_context() {
        let e = Error::absent("tool_absent", "nsys not found").with_expected("nsys on PATH");
        let json = serde_json::to_string(&e).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"kind":"absent","code":"tool_absent","message":"nsys not found","expected":"nsys on PATH"}"#
        );
    }
}
