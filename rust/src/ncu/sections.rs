//! What ncu's sections gave per launch, as given: the instruction mix, rule results and sections.

use super::cells::{floats, function_of, ints, strings, table};
use super::fields;
use super::model::Report;
use crate::error::Result;
use crate::table::Table;

fn kernel_of(report: &Report, row: usize) -> (Option<i64>, Option<String>) {
    report
        .launches
        .get(row)
        .map_or((None, None), |l| (Some(l.id), function_of(l)))
}

/// One row per launch × opcode (where the report collected `sass__inst_executed_per_opcode`).
pub fn instruction_mix_table(report: &Report) -> Result<Table> {
    let (ids, names): (Vec<_>, Vec<_>) = report
        .instruction_mix
        .iter()
        .map(|o| kernel_of(report, o.launch))
        .unzip();
    table(
        fields::INSTRUCTION_MIX,
        vec![
            ("launch_id".into(), ints(ids)),
            ("kernel_function".into(), strings(names)),
            (
                "opcode".into(),
                strings(
                    report
                        .instruction_mix
                        .iter()
                        .map(|o| Some(o.opcode.clone()))
                        .collect(),
                ),
            ),
            (
                "executed_inst".into(),
                floats(
                    report
                        .instruction_mix
                        .iter()
                        .map(|o| Some(o.executed))
                        .collect(),
                ),
            ),
        ],
    )
}

/// ncu's rule results, verbatim.
pub fn rules_table(report: &Report) -> Result<Table> {
    let r = &report.rules;
    let (ids, names): (Vec<_>, Vec<_>) = r.iter().map(|x| kernel_of(report, x.launch)).unzip();
    table(
        fields::RULES,
        vec![
            ("launch_id".into(), ints(ids)),
            ("kernel_function".into(), strings(names)),
            (
                "section".into(),
                strings(r.iter().map(|x| Some(x.section.clone())).collect()),
            ),
            (
                "rule".into(),
                strings(r.iter().map(|x| Some(x.rule.clone())).collect()),
            ),
            (
                "rule_type".into(),
                strings(r.iter().map(|x| Some(x.rule_type.clone())).collect()),
            ),
            (
                "title".into(),
                strings(r.iter().map(|x| x.title.clone()).collect()),
            ),
            (
                "message".into(),
                strings(r.iter().map(|x| Some(x.message.clone())).collect()),
            ),
            (
                "speedup_type".into(),
                strings(r.iter().map(|x| x.speedup_type.clone()).collect()),
            ),
            (
                "estimated_speedup_pct".into(),
                floats(r.iter().map(|x| x.estimated_speedup_pct).collect()),
            ),
        ],
    )
}

/// The sections ncu collected for each launch.
pub fn sections_table(report: &Report) -> Result<Table> {
    let s = &report.sections;
    let (ids, names): (Vec<_>, Vec<_>) = s.iter().map(|x| kernel_of(report, x.launch)).unzip();
    table(
        fields::SECTIONS,
        vec![
            ("launch_id".into(), ints(ids)),
            ("kernel_function".into(), strings(names)),
            (
                "section_id".into(),
                strings(s.iter().map(|x| x.identifier.clone()).collect()),
            ),
            (
                "section".into(),
                strings(s.iter().map(|x| Some(x.name.clone())).collect()),
            ),
            (
                "metrics".into(),
                ints(s.iter().map(|x| Some(x.metrics as i64)).collect()),
            ),
        ],
    )
}
