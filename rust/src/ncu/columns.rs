//! A report handed over as columns by the Python reader of `.ncu-rep` files (NVIDIA's `ncu_report`
//! module): launch identities, rules, sections and opcode counts as one JSON document, metric cells as
//! parallel columns. The native framing of the same file supplies the tool version and command line
//! and the number of results the columns must account for.

use super::codes;
use super::model::{
    LaunchIdentity, OpcodeRow, Report, RuleRow, SectionRow, SourceFormat, StoreBuilder, ToolInfo,
    Unmodeled,
};
use super::number::Parsed;
use super::report::Framing;
use crate::error::{Error, Result};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct LaunchIn {
    pub id: i64,
    pub kernel_name: String,
    pub kernel_demangled: Option<String>,
    pub kernel_function: Option<String>,
    pub kernel_mangled: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct RuleIn {
    pub launch: usize,
    pub section: String,
    pub rule: String,
    pub rule_type: String,
    pub title: Option<String>,
    pub message: String,
    pub speedup_type: Option<String>,
    pub estimated_speedup_pct: Option<f64>,
}

#[derive(Debug, Deserialize)]
pub struct SectionIn {
    pub launch: usize,
    pub identifier: Option<String>,
    pub name: String,
    pub metrics: usize,
}

#[derive(Debug, Deserialize)]
pub struct OpcodeIn {
    pub launch: usize,
    pub opcode: String,
    pub executed: f64,
}

#[derive(Debug, Deserialize)]
pub struct UnmodeledIn {
    pub kind: String,
    pub name: String,
    pub count: Option<u64>,
}

/// Everything but the metric cells.
#[derive(Debug, Deserialize)]
pub struct Extras {
    pub launches: Vec<LaunchIn>,
    #[serde(default)]
    pub rules: Vec<RuleIn>,
    #[serde(default)]
    pub sections: Vec<SectionIn>,
    #[serde(default)]
    pub opcodes: Vec<OpcodeIn>,
    #[serde(default)]
    pub unmodeled: Vec<UnmodeledIn>,
}

/// Metric cells as parallel columns; `kind` is 0 missing, 1 number, 2 text.
#[derive(Debug, Default)]
pub struct MetricCells {
    pub launch: Vec<u32>,
    pub name: Vec<String>,
    pub unit: Vec<String>,
    pub kind: Vec<u8>,
    pub number: Vec<f64>,
    pub text: Vec<String>,
}

fn invalid(message: impl Into<String>) -> Error {
    Error::input(codes::COLUMNS_INVALID, message)
}

/// Builds a report from the columns and the file's framing (None for a compressed report, whose
/// framing is not read natively: no launch-count cross-check, no version or command line from it).
pub fn from_columns(
    framing: Option<&Framing>,
    extras_json: &[u8],
    cells: &MetricCells,
) -> Result<Report> {
    let unframed = Framing::default();
    let framed = framing.is_some();
    let framing = framing.unwrap_or(&unframed);
    let extras: Extras =
        serde_json::from_slice(extras_json).map_err(|e| invalid(format!("report columns: {e}")))?;
    let n = extras.launches.len();
    if n == 0 {
        return Err(Error::input(
            codes::REPORT_EMPTY,
            "the report reader found 0 launches",
        ));
    }
    if framed && n as u64 != framing.results {
        return Err(invalid(format!(
            "the report reader found {n} launches but the file holds {} results",
            framing.results
        ))
        .with_expected(framing.results.to_string())
        .with_observed(n.to_string()));
    }
    let len = cells.launch.len();
    let lengths = [
        cells.name.len(),
        cells.unit.len(),
        cells.kind.len(),
        cells.number.len(),
        cells.text.len(),
    ];
    if lengths.iter().any(|l| *l != len) {
        return Err(invalid("metric columns differ in length"));
    }
    let mut builder = StoreBuilder::default();
    for i in 0..len {
        let row = cells.launch.get(i).copied().unwrap_or(u32::MAX) as usize;
        if row >= n {
            return Err(invalid(format!(
                "metric cell {i} names launch {row} of {n}"
            )));
        }
        let value = match cells.kind.get(i) {
            Some(0) => Parsed::Missing,
            Some(1) => match cells.number.get(i) {
                Some(v) if v.is_finite() => Parsed::Number(*v),
                _ => Parsed::Missing,
            },
            // An empty string is what a CSV page prints as an empty cell: missing, as there.
            Some(2) if cells.text.get(i).is_none_or(String::is_empty) => Parsed::Missing,
            Some(2) => Parsed::Text,
            other => return Err(invalid(format!("metric cell {i} has kind {other:?}"))),
        };
        builder.push(
            row,
            cells.name.get(i).map(String::as_str).unwrap_or_default(),
            None,
            None,
            cells.unit.get(i).map(String::as_str).unwrap_or_default(),
            value,
            cells.text.get(i).map(String::as_str),
        )?;
    }
    let check = |launch: usize, what: &str| {
        if launch < n {
            Ok(launch)
        } else {
            Err(invalid(format!("a {what} names launch {launch} of {n}")))
        }
    };
    let launches = extras
        .launches
        .into_iter()
        .map(|l| LaunchIdentity {
            id: l.id,
            kernel_name: l.kernel_name,
            kernel_demangled: l.kernel_demangled,
            kernel_function: l.kernel_function,
            kernel_mangled: l.kernel_mangled,
            ..LaunchIdentity::default()
        })
        .collect();
    let rules = extras
        .rules
        .into_iter()
        .map(|r| {
            Ok(RuleRow {
                launch: check(r.launch, "rule")?,
                section: r.section,
                rule: r.rule,
                rule_type: r.rule_type,
                title: r.title,
                message: r.message,
                speedup_type: r.speedup_type,
                estimated_speedup_pct: r.estimated_speedup_pct,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let sections = extras
        .sections
        .into_iter()
        .map(|s| {
            Ok(SectionRow {
                launch: check(s.launch, "section")?,
                identifier: s.identifier,
                name: s.name,
                metrics: s.metrics,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let instruction_mix = extras
        .opcodes
        .into_iter()
        .map(|o| {
            Ok(OpcodeRow {
                launch: check(o.launch, "opcode count")?,
                opcode: o.opcode,
                executed: o.executed,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Report {
        format: SourceFormat::NcuRep,
        tool: ToolInfo {
            version: framing.tool_version.clone(),
            version_text: framing.tool_version_text.clone(),
            version_source: if framed { "ncu-rep" } else { "none" }.to_string(),
            command_line: framing.command_line.clone(),
        },
        launches,
        metrics: builder.finish(n)?,
        rules,
        sections,
        instruction_mix,
        devices: framing
            .devices
            .iter()
            .map(|(id, name)| (i64::try_from(*id).unwrap_or(-1), name.clone()))
            .collect(),
        unmodeled: extras
            .unmodeled
            .into_iter()
            .map(|u| Unmodeled {
                kind: u.kind,
                name: u.name,
                count: u.count,
            })
            .collect(),
    })
}
