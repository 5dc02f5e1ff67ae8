//! The per-pair table of a paired comparison and the per-call table of an unpaired one, as Arrow.
//! Columns are always present (null where an input did not carry keys, cases or orders), so the
//! schema is stable.

use super::compare::{PairedInput, PairedOutcome, UnpairedInput, UnpairedOutcome};
use super::effect::EffectScale;
use super::fields;
use crate::error::Result;
use crate::table::Table;
use arrow_array::{ArrayRef, BooleanArray, Float64Array, StringArray, UInt64Array};
use std::sync::Arc;

/// `pair_index, key, case_id, order, valid, baseline_value, candidate_value, baseline_samples,
/// candidate_samples, effect_log, effect_pct, change_pct`.
pub fn pairs_table(input: &PairedInput, outcome: &PairedOutcome) -> Result<Table> {
    let c = &outcome.comparison;
    let scale = c.effect_scale;
    let rows = &outcome.rows;
    let n = rows.len();
    let key: Vec<Option<&str>> = (0..n)
        .map(|i| {
            input
                .keys
                .as_ref()
                .and_then(|k| k.get(i))
                .map(String::as_str)
        })
        .collect();
    let case: Vec<Option<&str>> = (0..n)
        .map(|i| {
            let cases = input.cases.as_ref()?;
            let c = cases.case_of.get(i)?;
            cases.names.get(*c).map(String::as_str)
        })
        .collect();
    let order: Vec<Option<&str>> = (0..n)
        .map(|i| {
            input
                .orders
                .as_ref()
                .and_then(|o| o.get(i))
                .map(|o| o.name())
        })
        .collect();
    let effect_log: Vec<Option<f64>> = rows
        .iter()
        .map(|r| r.effect.filter(|_| scale == EffectScale::LogRatio))
        .collect();
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "pair_index",
            Arc::new(UInt64Array::from_iter_values(0..n as u64)),
        ),
        ("key", Arc::new(StringArray::from(key))),
        ("case_id", Arc::new(StringArray::from(case))),
        ("order", Arc::new(StringArray::from(order))),
        (
            "valid",
            Arc::new(BooleanArray::from(
                rows.iter().map(|r| r.valid).collect::<Vec<_>>(),
            )),
        ),
        (
            "baseline_value",
            Arc::new(Float64Array::from(
                rows.iter().map(|r| r.baseline_value).collect::<Vec<_>>(),
            )),
        ),
        (
            "candidate_value",
            Arc::new(Float64Array::from(
                rows.iter().map(|r| r.candidate_value).collect::<Vec<_>>(),
            )),
        ),
        (
            "baseline_samples",
            Arc::new(UInt64Array::from_iter_values(
                input.baseline.counts().into_iter().map(|k| k as u64),
            )),
        ),
        (
            "candidate_samples",
            Arc::new(UInt64Array::from_iter_values(
                input.candidate.counts().into_iter().map(|k| k as u64),
            )),
        ),
        ("effect_log", Arc::new(Float64Array::from(effect_log))),
        (
            "effect_pct",
            Arc::new(Float64Array::from(
                rows.iter()
                    .map(|r| r.effect.map(|e| scale.to_pct(e)))
                    .collect::<Vec<_>>(),
            )),
        ),
        (
            "change_pct",
            Arc::new(Float64Array::from(
                rows.iter()
                    .map(|r| r.effect.map(|e| scale.to_change_pct(c.direction, e)))
                    .collect::<Vec<_>>(),
            )),
        ),
    ];
    Table::declared(fields::PAIRS, columns)
}

/// `role, index, value, samples, log_value`: every call of both sides of an unpaired comparison.
pub fn unpaired_table(input: &UnpairedInput, outcome: &UnpairedOutcome) -> Result<Table> {
    let mut role = Vec::new();
    let mut index = Vec::new();
    let mut value = Vec::new();
    let mut samples = Vec::new();
    for (name, calls, values) in [
        ("baseline", &input.baseline, &outcome.baseline_values),
        ("candidate", &input.candidate, &outcome.candidate_values),
    ] {
        for (i, (&v, k)) in values.iter().zip(calls.counts()).enumerate() {
            role.push(name);
            index.push(i as u64);
            value.push(v);
            samples.push(k as u64);
        }
    }
    let log: Vec<f64> = value.iter().map(|&v| libm::log(v)).collect();
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("role", Arc::new(StringArray::from(role))),
        ("index", Arc::new(UInt64Array::from(index))),
        ("value", Arc::new(Float64Array::from(value))),
        ("samples", Arc::new(UInt64Array::from(samples))),
        ("log_value", Arc::new(Float64Array::from(log))),
    ];
    Table::declared(fields::VALUES, columns)
}
