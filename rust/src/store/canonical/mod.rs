//! The one JSON reader and hasher of the evaluation core.
//!
//! [`parse_strict`] reads requests, driver results and records: duplicate keys, `NaN`/`Infinity`, invalid
//! UTF-8, a byte-order mark, lone surrogates and integer literals beyond ±(2^53−1) are `json_invalid` with
//! the JSON path where they occur. [`to_canonical`] writes RFC 8785 (JCS): keys sorted by UTF-16 code
//! units, no whitespace, ECMAScript number formatting, UTF-8. Every identity hash goes through here.
//!
//! One job per file, bottom up: `value` (the parsed value), `parse` (the strict reader) and `write`
//! (the canonical writer).

mod parse;
mod value;
mod write;

pub use parse::parse_strict;
pub use value::{Json, MAX_SAFE_INTEGER};
pub use write::{canonicalize, format_number, to_canonical};
