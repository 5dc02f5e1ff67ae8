//! The details page: one row per launch × section × metric, plus rule rows.

use crate::error::{Error, Result};
use crate::ncu::codes;
use crate::ncu::labels;
use crate::ncu::model::{
    LaunchIdentity, Report, RuleRow, SectionRow, SourceFormat, StoreBuilder, Unmodeled,
};
use crate::ncu::number::{self, Parsed};

use std::borrow::Cow;
use std::collections::HashMap;

use super::identity::*;
use super::raw::csv_tool;
use super::tokenizer::*;

const DETAILS_COLUMNS: &[&str] = &[
    "Section Name",
    "Metric Name",
    "Metric Unit",
    "Metric Value",
    "Rule Name",
    "Rule Type",
    "Rule Description",
    "Estimated Speedup Type",
    "Estimated Speedup",
];

/// Column positions of a details page.
struct DetailsColumns {
    section: usize,
    name: usize,
    unit: usize,
    value: usize,
    rule: Option<usize>,
    rule_type: Option<usize>,
    rule_text: Option<usize>,
    speedup_type: Option<usize>,
    speedup: Option<usize>,
}

impl DetailsColumns {
    fn new(header: &[String]) -> Result<Self> {
        let at = |name: &str| header.iter().position(|h| h == name);
        let need = |name: &str| {
            at(name).ok_or_else(|| {
                Error::input(
                    codes::COLUMN_MISSING,
                    format!("the details page has no {name:?} column"),
                )
                .with_expected("Section Name, Metric Name, Metric Unit, Metric Value")
            })
        };
        Ok(Self {
            section: need("Section Name")?,
            name: need("Metric Name")?,
            unit: need("Metric Unit")?,
            value: need("Metric Value")?,
            rule: at("Rule Name"),
            rule_type: at("Rule Type"),
            rule_text: at("Rule Description"),
            speedup_type: at("Estimated Speedup Type"),
            speedup: at("Estimated Speedup"),
        })
    }
}

fn cell<'a>(row: &'a [Cow<'a, [u8]>], col: Option<usize>) -> &'a [u8] {
    col.and_then(|c| row.get(c))
        .map(AsRef::as_ref)
        .unwrap_or_default()
}

pub(super) fn read_details(
    data: &[u8],
    header: &[String],
    body: &[(usize, usize)],
) -> Result<Report> {
    let identity = IdentityColumns::new(header);
    let cols = DetailsColumns::new(header)?;
    let mut unmodeled: Vec<Unmodeled> = header
        .iter()
        .enumerate()
        .filter(|(i, h)| !identity.is_identity(*i) && !DETAILS_COLUMNS.contains(&h.as_str()))
        .map(|(_, h)| Unmodeled {
            kind: "column".to_string(),
            name: h.clone(),
            count: None,
        })
        .collect();
    // Rule rows are shorter in ncu's own output (the metric columns end the record), so rows may be
    // narrower than the header; a row wider than the header is malformed.
    let mut launches: Vec<LaunchIdentity> = Vec::new();
    let mut row_of: HashMap<i64, usize> = HashMap::new();
    let mut builder = StoreBuilder::default();
    let mut rules = Vec::new();
    let mut sections: Vec<SectionRow> = Vec::new();
    let mut skipped = 0u64;
    let truncated_tail = !data.ends_with(b"\n");
    for (i, &(s, e)) in body.iter().enumerate() {
        let rec = data.get(s..e).unwrap_or_default();
        if rec.is_empty() {
            continue;
        }
        let row = fields(rec)?;
        let min_width = cols.value.max(cols.name) + 1;
        if row.len() > header.len() || row.len() < min_width {
            let last = i + 1 == body.len();
            let code = if last && row.len() < min_width && truncated_tail {
                codes::FILE_TRUNCATED
            } else {
                codes::FORMAT_INVALID
            };
            return Err(Error::input(
                code,
                format!(
                    "details record {} has {} cells, the header has {}",
                    i + 2,
                    row.len(),
                    header.len()
                ),
            ));
        }
        let launch = identity.launch(&row, i + 2)?;
        let launch_row = match row_of.get(&launch.id) {
            Some(&r) => r,
            None => {
                launches.push(launch);
                row_of.insert(launches.last().map_or(0, |l| l.id), launches.len() - 1);
                launches.len() - 1
            }
        };
        let section = text(cell(&row, Some(cols.section)));
        let name = text(cell(&row, Some(cols.name)));
        let rule = text(cell(&row, cols.rule));
        if !name.is_empty() {
            let unit = text(cell(&row, Some(cols.unit)));
            let raw_value = cell(&row, Some(cols.value));
            let (key, label) = if name.contains("__") {
                (name.clone(), None)
            } else {
                match labels::label_metric(&section, &name) {
                    Some(metric) => (metric.to_string(), Some(name.as_str())),
                    None => (format!("{section}: {name}"), Some(name.as_str())),
                }
            };
            let raw_text = text(raw_value);
            builder.push(
                launch_row,
                &key,
                Some(&section),
                label,
                &unit,
                number::parse(raw_value),
                Some(&raw_text),
            )?;
            count_section(&mut sections, launch_row, &section);
        } else if !rule.is_empty() {
            let speedup = match number::parse(cell(&row, cols.speedup)) {
                Parsed::Number(v) => Some(v),
                _ => None,
            };
            rules.push(RuleRow {
                launch: launch_row,
                section,
                rule,
                rule_type: text(cell(&row, cols.rule_type)),
                title: None,
                message: text(cell(&row, cols.rule_text)),
                speedup_type: opt_text(Some(cell(&row, cols.speedup_type))),
                estimated_speedup_pct: speedup,
            });
        } else {
            skipped += 1;
        }
    }
    if launches.is_empty() {
        return Err(Error::input(
            codes::REPORT_EMPTY,
            "the details page holds no launches",
        ));
    }
    if skipped > 0 {
        unmodeled.push(Unmodeled {
            kind: "row".to_string(),
            name: "details row with neither a metric nor a rule".to_string(),
            count: Some(skipped),
        });
    }
    let store = builder.finish(launches.len())?;
    Ok(Report {
        format: SourceFormat::DetailsCsv,
        tool: csv_tool(),
        launches,
        metrics: store,
        rules,
        sections,
        instruction_mix: Vec::new(),
        devices: Vec::new(),
        unmodeled,
    })
}

fn count_section(sections: &mut Vec<SectionRow>, launch: usize, name: &str) {
    if let Some(row) = sections
        .iter_mut()
        .rev()
        .find(|s| s.launch == launch && s.name == name)
    {
        row.metrics += 1;
        return;
    }
    sections.push(SectionRow {
        launch,
        identifier: None,
        name: name.to_string(),
        metrics: 1,
    });
}
