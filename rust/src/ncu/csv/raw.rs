//! The raw page: one row per launch, a units row second.

use crate::error::{Error, Result};
use crate::ncu::codes;

use crate::ncu::model::{
    CellSpan, LaunchIdentity, LazyCells, MetricColumn, MetricStore, Report, SourceFormat, ToolInfo,
};
use crate::ncu::number::{self, Parsed};
use crate::ncu::units;
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::HashMap;

use super::identity::*;
use super::tokenizer::*;

/// What a raw-page column holds.
#[derive(Debug, Clone, Copy)]
enum Role {
    Identity,
    Metric(usize),
}

/// One launch row of a raw page: its identity and the text cells of the columns parsed with it.
type ParsedRow = (LaunchIdentity, Vec<(usize, String)>);

pub(super) fn read_raw(
    data: Vec<u8>,
    header: &[String],
    body: &[(usize, usize)],
) -> Result<Report> {
    let identity = IdentityColumns::new(header);
    let Some((&units_rec, launches)) = body.split_first() else {
        return Err(Error::input(
            codes::UNITS_ROW_MISSING,
            "the raw page has a header but no units row",
        ));
    };
    let units_row = fields(data.get(units_rec.0..units_rec.1).unwrap_or_default())?;
    let id_unit = identity.get(&units_row, "ID").unwrap_or_default();
    if units_row.len() != header.len() || !id_unit.is_empty() {
        return Err(Error::input(
            codes::UNITS_ROW_MISSING,
            "the second line of a raw page must be the units row (empty under \"ID\")",
        )
        .with_expected("a units row: \"\",\"\",...,\"%\",\"byte\",...")
        .with_observed(format!(
            "{} cells, {} under \"ID\"",
            units_row.len(),
            crate::shape::of(id_unit)
        )));
    }
    let metric_cols: Vec<usize> = (0..header.len())
        .filter(|c| !identity.is_identity(*c))
        .collect();
    let mut seen = std::collections::HashSet::with_capacity(header.len());
    if let Some(dup) = header.iter().find(|h| !seen.insert(h.as_str())) {
        return Err(Error::input(
            codes::FORMAT_INVALID,
            format!("the raw page names column {dup:?} twice"),
        ));
    }
    let mut columns = Vec::with_capacity(metric_cols.len());
    let mut factors = Vec::with_capacity(metric_cols.len());
    for &c in &metric_cols {
        let reported = units_row.get(c).map(|f| text(f)).unwrap_or_default();
        let resolved = units::resolve(&reported);
        factors.push(resolved.map_or(1.0, |u| u.factor));
        columns.push(MetricColumn {
            name: header.get(c).cloned().unwrap_or_default(),
            section: None,
            label: None,
            unit: resolved.map_or_else(|| reported.clone(), |u| u.base.to_string()),
            reported_unit: reported,
            unit_known: resolved.is_some(),
        });
    }
    if launches.is_empty() {
        return Err(Error::input(
            codes::REPORT_EMPTY,
            "the raw page holds no launches (a header and units row only)",
        ));
    }
    let truncated_tail = !data.ends_with(b"\n");
    let width = metric_cols.len();
    let mut role = vec![Role::Identity; header.len()];
    for (j, &c) in metric_cols.iter().enumerate() {
        if let Some(r) = role.get_mut(c) {
            *r = Role::Metric(j);
        }
    }
    let identity_width = identity.at.values().max().map_or(0, |m| m + 1);
    // Columns some table reads are parsed now, row by row; the rest keep their positions only.
    let mut eager_of = vec![None; width];
    let mut eager_cols = Vec::new();
    for (j, column) in columns.iter().enumerate() {
        if crate::ncu::long_table::reads_metric(&column.name) {
            if let Some(slot) = eager_of.get_mut(j) {
                *slot = Some(eager_cols.len());
            }
            eager_cols.push(j);
        }
    }
    let eager_width = eager_cols.len().max(1);
    let mut spans = vec![CellSpan::default(); launches.len() * width];
    let mut eager_values = vec![f64::NAN; launches.len() * eager_width];
    let parsed: Vec<Result<ParsedRow>> = spans
        .par_chunks_mut(width.max(1))
        .zip(eager_values.par_chunks_mut(eager_width))
        .zip(launches.par_iter().enumerate())
        .map(|((slots, eager), (i, &(s, e)))| {
            let rec = data.get(s..e).unwrap_or_default();
            let mut ident: Vec<Cow<'_, [u8]>> = vec![Cow::Borrowed(&[][..]); identity_width];
            let mut texts = Vec::new();
            let mut too_long = false;
            let count = for_each_field(rec, |c, span| match role.get(c) {
                Some(Role::Identity) => {
                    if let Some(slot) = ident.get_mut(c) {
                        *slot = span.bytes(rec);
                    }
                }
                Some(Role::Metric(j)) => {
                    let (Ok(start), Ok(len)) = (
                        u32::try_from(span.start),
                        u32::try_from(span.end - span.start),
                    ) else {
                        too_long = true;
                        return;
                    };
                    if len >= CellSpan::ESCAPED {
                        too_long = true;
                        return;
                    }
                    if let Some(slot) = slots.get_mut(*j) {
                        let flag = if span.escaped { CellSpan::ESCAPED } else { 0 };
                        *slot = CellSpan {
                            start,
                            len: len | flag,
                        };
                    }
                    if let Some(k) = eager_of.get(*j).copied().flatten() {
                        let cell = span.bytes(rec);
                        match number::parse_in(&cell, factors.get(*j).copied().unwrap_or(1.0)) {
                            Parsed::Number(v) => {
                                if let Some(slot) = eager.get_mut(k) {
                                    *slot = v;
                                }
                            }
                            Parsed::Missing => {}
                            Parsed::Text => texts.push((k, text(&cell))),
                        }
                    }
                }
                None => {}
            })?;
            if too_long {
                return Err(Error::input(
                    codes::FORMAT_INVALID,
                    format!("launch row {} is longer than 2 GiB", i + 1),
                ));
            }
            if count != header.len() {
                let last = i + 1 == launches.len();
                let code = if last && (truncated_tail || count < header.len()) {
                    codes::FILE_TRUNCATED
                } else {
                    codes::FORMAT_INVALID
                };
                return Err(Error::input(
                    code,
                    format!(
                        "launch row {} has {} cells, the header has {}",
                        i + 1,
                        count,
                        header.len()
                    ),
                ));
            }
            Ok((identity.launch(&ident, i + 3)?, texts))
        })
        .collect();
    let mut identities = Vec::with_capacity(launches.len());
    let mut eager_text: Vec<HashMap<usize, String>> = vec![HashMap::new(); eager_cols.len()];
    for (row, result) in parsed.into_iter().enumerate() {
        let (launch, texts) = result?;
        identities.push(launch);
        for (k, t) in texts {
            if let Some(map) = eager_text.get_mut(k) {
                map.insert(row, t);
            }
        }
    }
    check_unique_ids(&identities)?;
    let row_starts = launches.iter().map(|&(s, _)| s).collect();
    let cells = LazyCells::new(data, row_starts, spans, factors);
    for (k, (&j, text)) in eager_cols.iter().zip(eager_text).enumerate() {
        let values = eager_values
            .iter()
            .skip(k)
            .step_by(eager_width)
            .copied()
            .collect();
        cells.prefill(j, values, text);
    }
    let store = MetricStore::lazy(columns, cells)?;
    Ok(Report {
        format: SourceFormat::RawCsv,
        tool: csv_tool(),
        launches: identities,
        metrics: store,
        rules: Vec::new(),
        sections: Vec::new(),
        instruction_mix: Vec::new(),
        devices: Vec::new(),
        unmodeled: Vec::new(),
    })
}

pub(super) fn csv_tool() -> ToolInfo {
    ToolInfo {
        version: None,
        version_text: None,
        version_source: "none".to_string(),
        command_line: None,
    }
}

pub(super) fn check_unique_ids(launches: &[LaunchIdentity]) -> Result<()> {
    let mut seen = HashMap::with_capacity(launches.len());
    for launch in launches {
        if seen.insert(launch.id, ()).is_some() {
            return Err(Error::input(
                codes::LAUNCH_DUPLICATE,
                format!("launch ID {} appears twice", launch.id),
            ));
        }
    }
    Ok(())
}
