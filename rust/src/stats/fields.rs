//! The columns of the statistics tables (`gpuopt stats compare`, `stats noise`), declared once: name,
//! type, unit and meaning (see `crate::column`); `tables.rs` builds them through `Table::declared`.

use crate::column::{Column, Declared, Dtype, Unit};

/// `stats.pairs`
pub const PAIRS: &[Column] = &[
    Column::new("pair_index", Dtype::UInt64, Unit::Id, "Position of the pair in the input (0-based)"),
    Column::text("key", "The pair's key (--key-column); null without one"),
    Column::text("case_id", "The pair's case (--case-column); null without one"),
    Column::text("order", "AB or BA: which side ran first in the pair; null when not recorded"),
    Column::flag("valid", "False when a side's value is missing, not positive or not finite (left out of the statistics)"),
    Column::float("baseline_value", Unit::Input, "The baseline's (stats noise: the first copy's) value of the pair (one call; several samples reduced by --within-call)"),
    Column::float("candidate_value", Unit::Input, "The candidate's (stats noise: the second copy's) value of the pair"),
    Column::new("baseline_samples", Dtype::UInt64, Unit::Count, "Samples the baseline call held"),
    Column::new("candidate_samples", Dtype::UInt64, Unit::Count, "Samples the candidate call held"),
    Column::float("effect_log", Unit::Ratio, "ln(baseline / candidate) for lower-is-better (ln(candidate / baseline) for higher): positive = improvement; null on the arithmetic scale"),
    Column::float("effect_pct", Unit::Pct, "The effect as a percentage improvement: 100 x (exp(effect_log) - 1)"),
    Column::float("change_pct", Unit::Pct, "The candidate's raw change: 100 x (candidate / baseline - 1); negative = lower"),
];

/// `stats.values`
pub const VALUES: &[Column] = &[
    Column::text("role", "baseline or candidate"),
    Column::new(
        "index",
        Dtype::UInt64,
        Unit::Id,
        "Position of the call on its side (0-based)",
    ),
    Column::float(
        "value",
        Unit::Input,
        "The call's value (several samples reduced by --within-call)",
    ),
    Column::new(
        "samples",
        Dtype::UInt64,
        Unit::Count,
        "Samples the call held",
    ),
    Column::float("log_value", Unit::Ratio, "ln(value)"),
];

/// Every table of the engine, by its `gpuopt schema` key.
pub fn tables() -> Vec<Declared> {
    vec![
        Declared::new("stats.pairs", PAIRS),
        Declared::new("stats.values", VALUES),
    ]
}
