//! The launch identity columns shared by both pages, and ncu's function base name.

use crate::error::{Error, Result};
use crate::ncu::codes;

use crate::ncu::model::{parse_dim3, LaunchIdentity};
use crate::ncu::number::{self, Parsed};

use std::borrow::Cow;
use std::collections::HashMap;

/// The leading identity columns of both pages (older versions omit some of the optional ones).
const IDENTITY: &[&str] = &[
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
];

pub(super) fn text(field: &[u8]) -> String {
    String::from_utf8_lossy(field).into_owned()
}

pub(super) fn int(field: &[u8]) -> Option<i64> {
    match number::parse(field) {
        Parsed::Number(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => Some(v as i64),
        _ => None,
    }
}

pub(super) fn opt_text(field: Option<&[u8]>) -> Option<String> {
    field.filter(|f| !f.is_empty()).map(text)
}

/// Positions of the identity columns in a header.
pub(super) struct IdentityColumns {
    pub(super) at: HashMap<&'static str, usize>,
}

impl IdentityColumns {
    pub(super) fn new(header: &[String]) -> Self {
        let at = IDENTITY
            .iter()
            .filter_map(|name| header.iter().position(|h| h == name).map(|i| (*name, i)))
            .collect();
        Self { at }
    }

    pub(super) fn is_identity(&self, col: usize) -> bool {
        self.at.values().any(|c| *c == col)
    }

    pub(super) fn get<'a>(&self, row: &'a [Cow<'a, [u8]>], name: &str) -> Option<&'a [u8]> {
        self.at
            .get(name)
            .and_then(|c| row.get(*c))
            .map(AsRef::as_ref)
    }

    pub(super) fn launch(&self, row: &[Cow<'_, [u8]>], line: usize) -> Result<LaunchIdentity> {
        let id_field = self.get(row, "ID").unwrap_or_default();
        let id = int(id_field).ok_or_else(|| {
            Error::input(
                codes::VALUE_INVALID,
                format!("record {line}: the ID cell is not an integer"),
            )
            .with_expected("an integer launch ID")
            .with_observed(crate::shape::of(id_field))
        })?;
        let kernel_name = self.get(row, "Kernel Name").map(text).unwrap_or_default();
        let demangled = kernel_name.contains('(').then(|| kernel_name.clone());
        let function = demangled
            .as_deref()
            .and_then(function_name)
            .or_else(|| (!kernel_name.is_empty()).then(|| kernel_name.clone()));
        Ok(LaunchIdentity {
            id,
            kernel_demangled: demangled,
            kernel_function: function,
            kernel_mangled: None,
            process_id: self.get(row, "Process ID").and_then(int),
            process_name: opt_text(self.get(row, "Process Name")),
            host_name: opt_text(self.get(row, "Host Name")),
            context: self.get(row, "Context").and_then(int),
            stream: self.get(row, "Stream").and_then(int),
            block: self
                .get(row, "Block Size")
                .and_then(|f| parse_dim3(&text(f))),
            grid: self
                .get(row, "Grid Size")
                .and_then(|f| parse_dim3(&text(f))),
            device: self.get(row, "Device").and_then(int),
            compute_capability: opt_text(self.get(row, "CC")),
            kernel_name,
        })
    }
}

/// ncu's "function" base name from a demangled signature: `void ns::kern<T>(int)` → `kern`.
pub fn function_name(demangled: &str) -> Option<String> {
    let bytes = demangled.trim_end().as_bytes();
    // Find the '(' that opens the parameter list: scan back from the last ')' to its match.
    let close = bytes.iter().rposition(|b| *b == b')')?;
    let mut depth = 0i32;
    let mut open = None;
    for i in (0..=close).rev() {
        match bytes.get(i) {
            Some(b')') => depth += 1,
            Some(b'(') => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let prefix = demangled.get(..open?)?;
    let mut name = String::new();
    let mut depth = 0i32;
    // Keep only depth-0 characters (drops template arguments), then the last `::` / space segment.
    for ch in prefix.chars() {
        match ch {
            '<' => depth += 1,
            '>' => depth -= 1,
            _ if depth == 0 => name.push(ch),
            _ => {}
        }
    }
    let last = name
        .rsplit(' ')
        .next()
        .unwrap_or_default()
        .rsplit("::")
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    (!last.is_empty()).then_some(last)
}
