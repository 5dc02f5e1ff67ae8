//! Nsight Compute units and their normalisation to base units: one explicit table, nothing inferred.
//!
//! `ncu --print-units auto` (the default) scales values to `Kbyte`, `usecond`, `Ghz` ...; `--print-units
//! base` and `.ncu-rep` files give base units. Every reported unit maps here to a base unit and a factor
//! (value_in_base = value × factor). ncu's byte prefixes are decimal (32.77 Kbyte = 32,768 byte).
//! A unit missing from this table is unknown: fatal on a metric the facts use, carried verbatim
//! (and listed as unmodeled) on any other metric.

/// Version of this table; recorded in every report's provenance.
pub const UNIT_TABLE_VERSION: &str = "ncu-units/1";

/// `(reported unit, base unit, factor)`.
const UNITS: &[(&str, &str, f64)] = &[
    // Dimensionless, percentages and counts: already base.
    ("", "", 1.0),
    ("%", "%", 1.0),
    ("inst", "inst", 1.0),
    ("thread", "thread", 1.0),
    ("warp", "warp", 1.0),
    ("block", "block", 1.0),
    ("cluster", "cluster", 1.0),
    ("SM", "SM", 1.0),
    ("request", "request", 1.0),
    ("sector", "sector", 1.0),
    ("sectors", "sector", 1.0),
    ("branches", "branches", 1.0),
    ("pass", "pass", 1.0),
    ("sample", "sample", 1.0),
    ("register", "register", 1.0),
    ("register/thread", "register/thread", 1.0),
    ("cycle", "cycle", 1.0),
    ("inst/cycle", "inst/cycle", 1.0),
    ("warp/cycle", "warp/cycle", 1.0),
    ("sector/cycle", "sector/cycle", 1.0),
    ("request/cycle", "request/cycle", 1.0),
    ("byte/sector", "byte/sector", 1.0),
    ("byte/request", "byte/request", 1.0),
    ("%/register", "%/register", 1.0),
    // Bytes (decimal prefixes).
    ("byte", "byte", 1.0),
    ("Kbyte", "byte", 1e3),
    ("Mbyte", "byte", 1e6),
    ("Gbyte", "byte", 1e9),
    ("Tbyte", "byte", 1e12),
    ("Pbyte", "byte", 1e15),
    ("byte/block", "byte/block", 1.0),
    ("Kbyte/block", "byte/block", 1e3),
    ("Mbyte/block", "byte/block", 1e6),
    ("byte/cycle", "byte/cycle", 1.0),
    ("Kbyte/cycle", "byte/cycle", 1e3),
    ("Mbyte/cycle", "byte/cycle", 1e6),
    ("%/byte", "%/byte", 1.0),
    ("%/Kbyte", "%/byte", 1e-3),
    ("%/Mbyte", "%/byte", 1e-6),
    // Time (both spellings ncu has used).
    ("ns", "ns", 1.0),
    ("nsecond", "ns", 1.0),
    ("us", "ns", 1e3),
    ("usecond", "ns", 1e3),
    ("ms", "ns", 1e6),
    ("msecond", "ns", 1e6),
    ("s", "ns", 1e9),
    ("second", "ns", 1e9),
    // Frequency (older versions print cycle/nsecond for clocks).
    ("hz", "hz", 1.0),
    ("Khz", "hz", 1e3),
    ("Mhz", "hz", 1e6),
    ("Ghz", "hz", 1e9),
    ("cycle/second", "hz", 1.0),
    ("cycle/usecond", "hz", 1e6),
    ("cycle/nsecond", "hz", 1e9),
    // Byte rates.
    ("byte/s", "byte/s", 1.0),
    ("Kbyte/s", "byte/s", 1e3),
    ("Mbyte/s", "byte/s", 1e6),
    ("Gbyte/s", "byte/s", 1e9),
    ("Tbyte/s", "byte/s", 1e12),
    ("byte/second", "byte/s", 1.0),
    ("Kbyte/second", "byte/s", 1e3),
    ("Mbyte/second", "byte/s", 1e6),
    ("Gbyte/second", "byte/s", 1e9),
    ("Tbyte/second", "byte/s", 1e12),
    // Sector, instruction and request rates.
    ("sector/s", "sector/s", 1.0),
    ("sector/second", "sector/s", 1.0),
    ("sector/ms", "sector/s", 1e3),
    ("sector/msecond", "sector/s", 1e3),
    ("sector/us", "sector/s", 1e6),
    ("sector/usecond", "sector/s", 1e6),
    ("sector/ns", "sector/s", 1e9),
    ("sector/nsecond", "sector/s", 1e9),
    ("inst/s", "inst/s", 1.0),
    ("inst/second", "inst/s", 1.0),
    ("inst/ns", "inst/s", 1e9),
    ("inst/nsecond", "inst/s", 1e9),
];

/// A reported unit resolved to its base unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    pub base: &'static str,
    pub factor: f64,
}

/// The base unit and factor of a reported unit, or `None` when the table does not know it.
pub fn resolve(reported: &str) -> Option<Unit> {
    UNITS
        .iter()
        .find(|(name, _, _)| *name == reported)
        .map(|&(_, base, factor)| Unit { base, factor })
}

/// Every reported unit the table knows (for error messages and docs).
pub fn known_units() -> impl Iterator<Item = &'static str> {
    UNITS.iter().map(|(name, _, _)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_units_become_base_units() {
        assert_eq!(
            resolve("ms"),
            Some(Unit {
                base: "ns",
                factor: 1e6
            })
        );
        assert_eq!(resolve("Kbyte").map(|u| u.factor), Some(1e3));
        assert_eq!(resolve("Ghz").map(|u| u.base), Some("hz"));
        assert_eq!(resolve("Tbyte/s").map(|u| u.base), Some("byte/s"));
        assert_eq!(
            resolve("%/Kbyte").map(|u| (u.base, u.factor)),
            Some(("%/byte", 1e-3))
        );
    }

    #[test]
    fn unknown_units_are_not_guessed() {
        assert_eq!(resolve("furlong/fortnight"), None);
        assert_eq!(resolve("GHz"), None);
        assert_eq!(resolve("KB"), None);
    }

    #[test]
    fn table_has_no_duplicate_names() {
        let mut names: Vec<&str> = known_units().collect();
        let total = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), total);
    }
}
