//! Entry points: open a CSV export (optionally with its session page and details page), and describe
//! a report (format, tool version, where each fact comes from, what the alias table was verified on).

use super::codes;
use super::kernels;
use super::launches::{arch, compute_capability, device_name};
use super::metrics;
use super::model::{Report, SourceFormat};
use super::resolve::{self, FactSource};
use super::roofline::{self, Coverage};
use super::session::{self, Session};
use super::units;
use crate::error::{Error, Result};
use serde::Serialize;
use std::path::Path;

/// The largest CSV page read (a full-set raw page of ~10⁵ launches is ~1 GB).
const MAX_CSV_BYTES: u64 = 4 << 30;

fn read_file(path: &Path) -> Result<Vec<u8>> {
    crate::identity::read_regular(path, MAX_CSV_BYTES, "ncu CSV page")
}

/// Opens a raw or details page; `session` (a session page of the same report) adds the tool version,
/// command line and device names, `details` (the details page of the same report, beside a raw page)
/// adds ncu's rule results and sections.
pub fn open_csv(path: &Path, session: Option<&Path>, details: Option<&Path>) -> Result<Report> {
    let shown = path.display().to_string();
    let data = read_file(path)?;
    if data.starts_with(b"NVR\0") {
        return Err(Error::input(
            codes::WRONG_PAGE,
            format!("{shown} is an .ncu-rep report, not a CSV export"),
        )
        .with_path(shown));
    }
    let mut report = super::csv::read(data).map_err(|e| with_path(e, &shown))?;
    if let Some(session_path) = session {
        let shown = session_path.display().to_string();
        let s = session::read(&read_file(session_path)?).map_err(|e| with_path(e, &shown))?;
        apply_session(&mut report, &s);
    }
    if let Some(details_path) = details {
        let shown = details_path.display().to_string();
        let d = super::csv::read(read_file(details_path)?).map_err(|e| with_path(e, &shown))?;
        merge_details(&mut report, d, &shown)?;
    }
    Ok(report)
}

fn with_path(e: Error, path: &str) -> Error {
    if e.path.is_some() {
        e
    } else {
        e.with_path(path.to_string())
    }
}

/// Takes the tool identity and device names from a session page.
pub fn apply_session(report: &mut Report, session: &Session) {
    report.tool = session.tool.clone();
    let names = session
        .device_attributes
        .iter()
        .find(|(k, _)| k == "display_name")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    report.devices = names
        .into_iter()
        .enumerate()
        .map(|(i, name)| (i as i64, name))
        .collect();
}

/// Adds the rules and sections of a details page to a raw page of the same report (matched by ID).
pub fn merge_details(report: &mut Report, details: Report, shown: &str) -> Result<()> {
    if details.format != SourceFormat::DetailsCsv {
        return Err(
            Error::input(codes::WRONG_PAGE, format!("{shown} is not a details page"))
                .with_path(shown.to_string()),
        );
    }
    let row_of = |launch: usize| -> Result<usize> {
        let id = details.launches.get(launch).map_or(-1, |l| l.id);
        report
            .launches
            .iter()
            .position(|l| l.id == id)
            .ok_or_else(|| {
                Error::input(
                    codes::LAUNCH_DUPLICATE,
                    format!("the details page has launch ID {id}, which the raw page lacks"),
                )
                .with_path(shown.to_string())
            })
    };
    for mut rule in details.rules.clone() {
        rule.launch = row_of(rule.launch)?;
        report.rules.push(rule);
    }
    for mut section in details.sections.clone() {
        section.launch = row_of(section.launch)?;
        report.sections.push(section);
    }
    Ok(())
}

/// A report's description: where it came from and how its facts were read.
#[derive(Debug, Serialize)]
pub struct Info {
    pub source_format: &'static str,
    pub tool: super::model::ToolInfo,
    pub launches: usize,
    pub kernels: usize,
    pub metrics: usize,
    pub devices: Vec<String>,
    pub archs: Vec<String>,
    pub unit_table: &'static str,
    pub alias_table: &'static str,
    /// True when the tool version and every arch are ones the alias table was verified on.
    pub alias_table_verified: bool,
    pub alias_table_verified_on: Vec<String>,
    pub fact_sources: Vec<FactSource>,
    /// `--clock-control` of the collection (`base` locks clocks, so durations are not production ones).
    pub clock_control: Option<ProfilerOption>,
    /// `--cache-control` of the collection (`all` flushes caches before each replay pass).
    pub cache_control: Option<ProfilerOption>,
    pub roofline: Vec<Coverage>,
    pub rules: usize,
    pub sections: usize,
    pub instruction_mix_rows: usize,
}

fn distinct(values: impl IntoIterator<Item = Option<String>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values.into_iter().flatten() {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// A profiler option's value and where it was read from.
#[derive(Debug, Serialize)]
pub struct ProfilerOption {
    pub value: String,
    /// `command line`, or `ncu default` when the recorded command line does not set it.
    pub source: &'static str,
}

/// The value of `--name VALUE` / `--name=VALUE` in a recorded command line, else ncu's documented default.
pub fn profiler_option(
    command_line: Option<&str>,
    name: &str,
    default: &str,
) -> Option<ProfilerOption> {
    let words: Vec<&str> = command_line?.split_whitespace().collect();
    let flag = format!("--{name}");
    let prefix = format!("--{name}=");
    for (i, word) in words.iter().enumerate() {
        if let Some(value) = word.strip_prefix(&prefix) {
            return Some(ProfilerOption {
                value: value.to_string(),
                source: "command line",
            });
        }
        if *word == flag {
            if let Some(value) = words.get(i + 1) {
                return Some(ProfilerOption {
                    value: (*value).to_string(),
                    source: "command line",
                });
            }
        }
    }
    Some(ProfilerOption {
        value: default.to_string(),
        source: "ncu default",
    })
}

/// Describes a report (resolving every fact, so unit errors surface here too).
pub fn info(report: &Report) -> Result<Info> {
    let resolved = resolve::resolve(report)?;
    let rows = 0..report.launches.len();
    let archs = distinct(
        rows.clone()
            .map(|r| arch(compute_capability(report, r).as_deref())),
    );
    let verified = !archs.is_empty()
        && archs
            .iter()
            .all(|a| metrics::verified(report.tool.version.as_deref(), Some(a)));
    Ok(Info {
        source_format: report.format.as_str(),
        tool: report.tool.clone(),
        launches: report.launches.len(),
        kernels: kernels::groups(report).len(),
        metrics: report.metrics.columns.len(),
        devices: distinct(rows.map(|r| device_name(report, r))),
        archs,
        unit_table: units::UNIT_TABLE_VERSION,
        alias_table: metrics::ALIAS_TABLE_VERSION,
        alias_table_verified: verified,
        alias_table_verified_on: metrics::VERIFIED_ON
            .iter()
            .map(|(v, a)| format!("ncu {v} on {a}"))
            .collect(),
        fact_sources: resolve::fact_sources(&resolved),
        clock_control: profiler_option(
            report.tool.command_line.as_deref(),
            "clock-control",
            "base",
        ),
        cache_control: profiler_option(report.tool.command_line.as_deref(), "cache-control", "all"),
        roofline: roofline::coverage(report),
        rules: report.rules.len(),
        sections: report.sections.len(),
        instruction_mix_rows: report.instruction_mix.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiler_options_from_command_lines() {
        let h200 = "ncu --clock-control none --set full --import-source yes -o r ./app";
        let c = profiler_option(Some(h200), "clock-control", "base").unwrap();
        assert_eq!((c.value.as_str(), c.source), ("none", "command line"));
        let c = profiler_option(Some(h200), "cache-control", "all").unwrap();
        assert_eq!((c.value.as_str(), c.source), ("all", "ncu default"));
        let c =
            profiler_option(Some("ncu --clock-control=base ./a"), "clock-control", "x").unwrap();
        assert_eq!(c.value, "base");
        assert!(profiler_option(None, "clock-control", "base").is_none());
    }
}
