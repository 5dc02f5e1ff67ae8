//! Every table's column declarations, gathered from the engines that build the tables (each engine's
//! `fields.rs`; `comm.rs` and `ranks.rs` for what two engines share). Python reads them through
//! `_native.table_fields_json()` and generates `gpuopt schema AREA.TABLE`, `references/fields.md`, the
//! units people's tables scale by and the column lists of the agent tools.

use crate::column::{Column, Declared};

/// Every declared table, sorted by key.
pub fn tables() -> Vec<Declared> {
    let mut all = crate::nsys::fields::tables();
    all.extend(crate::torch_trace::fields::tables());
    all.extend(crate::torch_trace::paths::fields::tables());
    all.extend(crate::torch_trace::flops::fields::tables());
    all.extend(crate::ncu::fields::tables());
    all.extend(crate::sass::fields::tables());
    all.extend(crate::stats::fields::tables());
    all.extend(crate::ranks::tables());
    for &(nsys, torch, columns) in crate::analyses::fields::TABLES {
        all.push(Declared::new(nsys, columns));
        let ranked: Vec<Column> = std::iter::once(crate::torch_trace::fields::RANK)
            .chain(columns.iter().copied())
            .collect();
        all.push(Declared::new(torch, &ranked));
    }
    all.sort_by_key(|t| t.key);
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::{Dtype, Unit};
    use std::collections::HashSet;

    #[test]
    fn keys_and_column_names_are_unique() {
        let all = tables();
        let keys: HashSet<&str> = all.iter().map(|t| t.key).collect();
        assert_eq!(keys.len(), all.len());
        for t in &all {
            let names: HashSet<&str> = t.columns.iter().map(|c| c.name).collect();
            assert_eq!(
                names.len(),
                t.columns.len(),
                "{} declares a column twice",
                t.key
            );
        }
    }

    /// The unit a column's name promises (STYLE: units in the name), if it promises one.
    fn unit_in_name(name: &str) -> Option<Unit> {
        let base = ["_sum", "_mean", "_min", "_max"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .unwrap_or(name);
        let rules: [(&str, Unit); 9] = [
            ("_ns", Unit::Ns),
            ("_bytes_per_s", Unit::BytesPerS),
            ("_bytes", Unit::Bytes),
            ("_gbps", Unit::Gbps),
            ("_pct", Unit::Pct),
            ("_pct_of_peak", Unit::Pct),
            ("_hz", Unit::Hz),
            ("_flop_per_s", Unit::FlopPerS),
            ("_flop_per_byte", Unit::FlopPerByte),
        ];
        rules
            .iter()
            .find(|(suffix, _)| base.ends_with(suffix))
            .map(|(_, unit)| *unit)
    }

    #[test]
    fn units_agree_with_names_and_types() {
        for t in tables() {
            for c in &t.columns {
                if let Some(unit) = unit_in_name(c.name) {
                    assert_eq!(c.unit, unit, "{}.{}", t.key, c.name);
                }
                let numeric = matches!(
                    c.dtype,
                    Dtype::Int64 | Dtype::UInt32 | Dtype::UInt64 | Dtype::Float64
                );
                assert_eq!(numeric, c.unit != Unit::None, "{}.{}", t.key, c.name);
                assert!(
                    !c.meaning.is_empty() && !c.meaning.contains('\n'),
                    "{}.{}: one line",
                    t.key,
                    c.name
                );
            }
        }
    }
}
