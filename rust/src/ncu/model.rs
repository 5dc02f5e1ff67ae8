//! The in-memory report every reader builds: launch identities, a launch × metric matrix with values in
//! base units, and what ncu said about each launch (rules, sections, instruction mix).

use super::codes;
use super::number::{self, Parsed};
use super::units;
use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// Where a report came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SourceFormat {
    #[serde(rename = "ncu-csv-raw")]
    RawCsv,
    #[serde(rename = "ncu-csv-details")]
    DetailsCsv,
    #[serde(rename = "ncu-rep")]
    NcuRep,
}

impl SourceFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RawCsv => "ncu-csv-raw",
            Self::DetailsCsv => "ncu-csv-details",
            Self::NcuRep => "ncu-rep",
        }
    }
}

/// What identifies one profiled launch (the CSV's leading columns, or the report's action).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaunchIdentity {
    pub id: i64,
    /// The name exactly as the source printed it.
    pub kernel_name: String,
    pub kernel_demangled: Option<String>,
    pub kernel_function: Option<String>,
    pub kernel_mangled: Option<String>,
    pub process_id: Option<i64>,
    pub process_name: Option<String>,
    pub host_name: Option<String>,
    pub context: Option<i64>,
    pub stream: Option<i64>,
    pub block: Option<[i64; 3]>,
    pub grid: Option<[i64; 3]>,
    pub device: Option<i64>,
    pub compute_capability: Option<String>,
}

/// One metric (a matrix column).
#[derive(Debug, Clone, PartialEq)]
pub struct MetricColumn {
    /// The metric name (`gpu__time_duration.sum`, `FBSP.TriageCompute.dramc__…`), or for a details page
    /// printed with labels the metric the label maps to, or the label itself when it maps to none.
    pub name: String,
    /// The details page's `Section Name`, where the source has one.
    pub section: Option<String>,
    /// The details page's label (`Duration`), where the source printed labels.
    pub label: Option<String>,
    /// The base unit when the unit is known, else the unit as reported.
    pub unit: String,
    /// The unit as the source printed it (the first one seen).
    pub reported_unit: String,
    pub unit_known: bool,
}

/// A cell of the matrix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    Number(f64),
    Text(&'a str),
    Missing,
}

/// Launch × metric values in base units. Built eagerly (details page, `.ncu-rep` columns) or, for a
/// raw page, lazily: cells stay positions in the file and a column is converted to numbers on first
/// use, so a facts query reads ~60 of ~1,200 columns.
#[derive(Debug, Clone, Default)]
pub struct MetricStore {
    pub columns: Vec<MetricColumn>,
    index: HashMap<String, usize>,
    rows: usize,
    backing: Backing,
}

#[derive(Debug, Clone)]
enum Backing {
    /// Row-major values; `NaN` marks a missing cell or one that holds text.
    Eager {
        values: Vec<f64>,
        text: HashMap<(usize, usize), String>,
    },
    Lazy(Arc<LazyCells>),
}

impl Default for Backing {
    fn default() -> Self {
        Self::Eager {
            values: Vec::new(),
            text: HashMap::new(),
        }
    }
}

/// Where one cell's text lies in its record; the top bit of `len` marks doubled quotes to undo.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CellSpan {
    pub start: u32,
    pub len: u32,
}

impl CellSpan {
    pub const ESCAPED: u32 = 1 << 31;
}

/// A raw page's metric cells as positions in the file, parsed one column at a time.
#[derive(Debug)]
pub struct LazyCells {
    data: Vec<u8>,
    row_starts: Vec<usize>,
    width: usize,
    /// Row-major, `rows × width`, offsets relative to the row's record.
    spans: Vec<CellSpan>,
    factors: Vec<f64>,
    parsed: Vec<OnceLock<ParsedColumn>>,
}

#[derive(Debug, Default)]
struct ParsedColumn {
    values: Vec<f64>,
    text: HashMap<usize, String>,
}

impl LazyCells {
    pub fn new(
        data: Vec<u8>,
        row_starts: Vec<usize>,
        spans: Vec<CellSpan>,
        factors: Vec<f64>,
    ) -> Self {
        let width = factors.len();
        let parsed = (0..width).map(|_| OnceLock::new()).collect();
        Self {
            data,
            row_starts,
            width,
            spans,
            factors,
            parsed,
        }
    }

    /// Stores a column parsed while the rows were read (it is then never parsed again).
    pub fn prefill(&self, col: usize, values: Vec<f64>, text: HashMap<usize, String>) {
        if let Some(slot) = self.parsed.get(col) {
            let _ = slot.set(ParsedColumn { values, text });
        }
    }

    fn column(&self, col: usize) -> Option<&ParsedColumn> {
        Some(self.parsed.get(col)?.get_or_init(|| self.parse_column(col)))
    }

    fn parse_column(&self, col: usize) -> ParsedColumn {
        let factor = self.factors.get(col).copied().unwrap_or(1.0);
        let mut out = ParsedColumn {
            values: Vec::with_capacity(self.row_starts.len()),
            text: HashMap::new(),
        };
        for (row, &base) in self.row_starts.iter().enumerate() {
            let span = self
                .spans
                .get(row * self.width + col)
                .copied()
                .unwrap_or_default();
            let start = base + span.start as usize;
            let len = (span.len & !CellSpan::ESCAPED) as usize;
            let raw = self.data.get(start..start + len).unwrap_or_default();
            let bytes = if span.len & CellSpan::ESCAPED == 0 {
                std::borrow::Cow::Borrowed(raw)
            } else {
                unescape(raw)
            };
            match number::parse_in(&bytes, factor) {
                Parsed::Number(v) => out.values.push(v),
                Parsed::Missing => out.values.push(f64::NAN),
                Parsed::Text => {
                    out.values.push(f64::NAN);
                    out.text
                        .insert(row, String::from_utf8_lossy(&bytes).into_owned());
                }
            }
        }
        out
    }
}

/// Undoes CSV quote doubling (`""` → `"`).
pub fn unescape(raw: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let mut out = Vec::with_capacity(raw.len());
    let mut quote = false;
    for &b in raw {
        if b == b'"' && quote {
            quote = false;
            continue;
        }
        quote = b == b'"';
        out.push(b);
    }
    std::borrow::Cow::Owned(out)
}

impl MetricStore {
    /// A store from columns and a full row-major matrix.
    pub fn new(
        columns: Vec<MetricColumn>,
        rows: usize,
        values: Vec<f64>,
        text: HashMap<(usize, usize), String>,
    ) -> Result<Self> {
        if values.len() != rows * columns.len() {
            return Err(Error::internal(
                "ncu_store_shape",
                "metric matrix does not match its shape",
            ));
        }
        Ok(Self {
            index: index_of(&columns),
            columns,
            rows,
            backing: Backing::Eager { values, text },
        })
    }

    /// A store whose columns are parsed on first use.
    pub fn lazy(columns: Vec<MetricColumn>, cells: LazyCells) -> Result<Self> {
        if cells.width != columns.len() || cells.spans.len() != cells.row_starts.len() * cells.width
        {
            return Err(Error::internal(
                "ncu_store_shape",
                "metric cells do not match their shape",
            ));
        }
        Ok(Self {
            index: index_of(&columns),
            columns,
            rows: cells.row_starts.len(),
            backing: Backing::Lazy(Arc::new(cells)),
        })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub fn column(&self, col: usize) -> Option<&MetricColumn> {
        self.columns.get(col)
    }

    pub fn cell(&self, row: usize, col: usize) -> Cell<'_> {
        match &self.backing {
            Backing::Eager { values, text } => {
                let value = values
                    .get(row * self.columns.len() + col)
                    .copied()
                    .unwrap_or(f64::NAN);
                if !value.is_nan() {
                    return Cell::Number(value);
                }
                match text.get(&(row, col)) {
                    Some(t) => Cell::Text(t),
                    None => Cell::Missing,
                }
            }
            Backing::Lazy(cells) => {
                let Some(column) = cells.column(col) else {
                    return Cell::Missing;
                };
                let value = column.values.get(row).copied().unwrap_or(f64::NAN);
                if !value.is_nan() {
                    return Cell::Number(value);
                }
                match column.text.get(&row) {
                    Some(t) => Cell::Text(t),
                    None => Cell::Missing,
                }
            }
        }
    }

    /// How many launches carry a value (number or text) for `col`.
    pub fn present_count(&self, col: usize) -> usize {
        (0..self.rows)
            .filter(|row| !matches!(self.cell(*row, col), Cell::Missing))
            .count()
    }
}

fn index_of(columns: &[MetricColumn]) -> HashMap<String, usize> {
    columns
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.clone(), i))
        .collect()
}

/// A rule result as ncu reported it (its message is NVIDIA's text, kept verbatim).
#[derive(Debug, Clone, PartialEq)]
pub struct RuleRow {
    pub launch: usize,
    pub section: String,
    pub rule: String,
    pub rule_type: String,
    pub title: Option<String>,
    pub message: String,
    pub speedup_type: Option<String>,
    pub estimated_speedup_pct: Option<f64>,
}

/// A section ncu collected for a launch.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionRow {
    pub launch: usize,
    pub identifier: Option<String>,
    pub name: String,
    pub metrics: usize,
}

/// One opcode's executed-instruction count (`sass__inst_executed_per_opcode` instances).
#[derive(Debug, Clone, PartialEq)]
pub struct OpcodeRow {
    pub launch: usize,
    pub opcode: String,
    pub executed: f64,
}

/// Content that was seen but is not turned into facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmodeled {
    pub kind: String,
    pub name: String,
    pub count: Option<u64>,
}

/// Tool identity as the source states it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ToolInfo {
    /// `2025.3.1.0`; `None` when the source does not say (a CSV without its session page).
    pub version: Option<String>,
    /// The full version text (`2025.3.1.0 (build 36398880) (public-release)`).
    pub version_text: Option<String>,
    /// Where the version came from: `ncu-rep`, `session-csv`, `caller` or `none`.
    pub version_source: String,
    pub command_line: Option<String>,
}

/// A parsed report.
#[derive(Debug, Clone)]
pub struct Report {
    pub format: SourceFormat,
    pub tool: ToolInfo,
    pub launches: Vec<LaunchIdentity>,
    pub metrics: MetricStore,
    pub rules: Vec<RuleRow>,
    pub sections: Vec<SectionRow>,
    pub instruction_mix: Vec<OpcodeRow>,
    /// `(device id, name)` from the report's session (used when launches lack a name attribute).
    pub devices: Vec<(i64, String)>,
    /// Unmodeled content found while reading (columns, instanced metrics, ...); metric-level
    /// unmodeled items are derived from the alias table by `long_table::unmodeled`.
    pub unmodeled: Vec<Unmodeled>,
}

/// Builds a store cell by cell (details page, `ncu_report` columns): units are checked per cell,
/// because a details page in auto units may print one metric in `us` for one launch and `ms` for another.
#[derive(Debug, Default)]
pub struct StoreBuilder {
    columns: Vec<MetricColumn>,
    index: HashMap<String, usize>,
    cells: Vec<(usize, usize, f64)>,
    text: HashMap<(usize, usize), String>,
}

impl StoreBuilder {
    /// Adds one cell; `value` is the raw text unless `number` already holds the value.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        row: usize,
        name: &str,
        section: Option<&str>,
        label: Option<&str>,
        unit: &str,
        value: Parsed,
        text: Option<&str>,
    ) -> Result<()> {
        let resolved = units::resolve(unit);
        let (base, factor, known) = match resolved {
            Some(u) => (u.base.to_string(), u.factor, true),
            None => (unit.to_string(), 1.0, false),
        };
        let col = match self.index.get(name) {
            Some(&col) => {
                if let Some(existing) = self.columns.get(col) {
                    if existing.unit != base || existing.unit_known != known {
                        return Err(Error::input(
                            codes::UNIT_INCONSISTENT,
                            format!(
                                "metric {name} is reported in {} and in {unit}, which are not the same dimension",
                                existing.reported_unit
                            ),
                        )
                        .with_expected(existing.unit.clone())
                        .with_observed(unit.to_string()));
                    }
                }
                col
            }
            None => {
                self.columns.push(MetricColumn {
                    name: name.to_string(),
                    section: section.map(str::to_string),
                    label: label.map(str::to_string),
                    unit: base,
                    reported_unit: unit.to_string(),
                    unit_known: known,
                });
                let col = self.columns.len() - 1;
                self.index.insert(name.to_string(), col);
                col
            }
        };
        match value {
            Parsed::Number(v) => match number::in_base(v, factor) {
                Some(v) => self.cells.push((row, col, v)),
                None => {
                    let shown = text.map_or_else(|| v.to_string(), str::to_string);
                    self.text.insert((row, col), shown);
                }
            },
            Parsed::Text => {
                self.text
                    .insert((row, col), text.unwrap_or_default().to_string());
            }
            Parsed::Missing => {}
        }
        Ok(())
    }

    pub fn finish(self, rows: usize) -> Result<MetricStore> {
        let width = self.columns.len();
        let mut values = vec![f64::NAN; rows * width];
        for (row, col, v) in self.cells {
            if let Some(slot) = values.get_mut(row * width + col) {
                *slot = v;
            }
        }
        MetricStore::new(self.columns, rows, values, self.text)
    }
}

/// Parses `(256, 1, 1)` into its three numbers.
pub fn parse_dim3(text: &str) -> Option<[i64; 3]> {
    let inner = text.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut parts = inner.split(',').map(|p| p.trim().parse::<i64>().ok());
    let dims = [parts.next()??, parts.next()??, parts.next()??];
    if parts.next().is_some() {
        return None;
    }
    Some(dims)
}

/// `2025.3.1.0` from `2025.3.1.0 (build 36398880) (public-release)` or `Version 2025.3.1.0 ...`.
pub fn version_number(text: &str) -> Option<String> {
    text.split_whitespace()
        .find(|w| {
            let mut parts = w.split('.');
            let year = parts.next().unwrap_or_default();
            year.len() == 4
                && year.bytes().all(|b| b.is_ascii_digit())
                && parts.clone().count() >= 1
                && parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dim3_parses_ncu_triples() {
        assert_eq!(parse_dim3("(256, 1, 1)"), Some([256, 1, 1]));
        assert_eq!(parse_dim3("(16384, 1, 1)"), Some([16384, 1, 1]));
        assert_eq!(parse_dim3("(1, 2)"), None);
        assert_eq!(parse_dim3("256"), None);
    }

    #[test]
    fn version_number_from_banner_and_session() {
        assert_eq!(
            version_number("2025.3.1.0 (build 36398880) (public-release)").as_deref(),
            Some("2025.3.1.0")
        );
        assert_eq!(
            version_number("Version 2024.1.1.0 (build 33998838) (public-release)").as_deref(),
            Some("2024.1.1.0")
        );
        assert_eq!(version_number("no version here"), None);
    }

    #[test]
    fn builder_normalises_units_per_cell_and_rejects_mixed_dimensions() {
        let mut b = StoreBuilder::default();
        b.push(0, "d", None, None, "us", Parsed::Number(45.47), None)
            .unwrap();
        b.push(1, "d", None, None, "ms", Parsed::Number(1.19), None)
            .unwrap();
        let err = b
            .push(2, "d", None, None, "Kbyte", Parsed::Number(1.0), None)
            .unwrap_err();
        assert_eq!(err.code, codes::UNIT_INCONSISTENT);
        let store = b.finish(3).unwrap();
        assert_eq!(store.cell(0, 0), Cell::Number(45.47 * 1e3));
        assert_eq!(store.cell(1, 0), Cell::Number(1.19 * 1e6));
        assert_eq!(store.cell(2, 0), Cell::Missing);
        assert_eq!(store.columns[0].unit, "ns");
    }
}
