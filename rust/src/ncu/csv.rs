//! `ncu --csv` exports: the raw page (one row per launch, a units row second) and the details page
//! (one row per launch × section × metric, plus rule rows). Console lines (`==PROF==`, `==WARNING==`)
//! before the header are skipped; an `==ERROR==` line with no table after it is ncu's error.

use super::codes;
use super::metrics;
use super::model::{
    parse_dim3, unescape, CellSpan, LaunchIdentity, LazyCells, MetricColumn, MetricStore, Report,
    RuleRow, SectionRow, SourceFormat, StoreBuilder, ToolInfo, Unmodeled,
};
use super::number::{self, Parsed};
use super::units;
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::HashMap;

/// The leading identity columns of both pages (older versions omit some of the optional ones).
const IDENTITY: &[&str] = &[
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
];

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

/// Which page a CSV holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    Raw,
    Details,
}

/// Reads a raw or details page (detected from the header).
pub fn read(data: Vec<u8>) -> Result<Report> {
    let records = split_records(&data)?;
    let header_at = find_header(&data, &records)?;
    let header = fields(record(&data, &records, header_at))?;
    let header: Vec<String> = header
        .into_iter()
        .map(|f| String::from_utf8_lossy(&f).into_owned())
        .collect();
    let page = if header.iter().any(|h| h == "Metric Name") {
        Page::Details
    } else {
        Page::Raw
    };
    for required in ["ID", "Kernel Name"] {
        if !header.iter().any(|h| h == required) {
            return Err(Error::input(
                codes::COLUMN_MISSING,
                format!("the CSV header has no {required:?} column"),
            )
            .with_expected(format!(
                "an ncu --csv raw or details page with {required:?}"
            )));
        }
    }
    let body = records.get(header_at + 1..).unwrap_or_default();
    match page {
        Page::Raw => read_raw(data, &header, body),
        Page::Details => read_details(&data, &header, body),
    }
}

/// Byte ranges of the records (quote-aware; a trailing `\r` is dropped). Lines are found first and a
/// line ends a record only when the quotes seen so far pair up, so a newline inside quotes is kept.
pub(crate) fn split_records(data: &[u8]) -> Result<Vec<(usize, usize)>> {
    let mut out = Vec::with_capacity(data.len() / 4096 + 16);
    let mut start = 0usize;
    let mut pos = 0usize;
    let mut quotes = 0usize;
    while let Some(rest) = data.get(pos..) {
        let Some(nl) = memchr::memchr(b'\n', rest) else {
            quotes += count_quotes(rest);
            break;
        };
        let line = rest.get(..nl).unwrap_or_default();
        quotes += count_quotes(line);
        let end = pos + nl;
        if quotes.is_multiple_of(2) {
            let trimmed = if end > start && data.get(end - 1) == Some(&b'\r') {
                end - 1
            } else {
                end
            };
            out.push((start, trimmed));
            start = end + 1;
            quotes = 0;
        }
        pos = end + 1;
    }
    if quotes % 2 == 1 {
        return Err(Error::input(
            codes::FILE_TRUNCATED,
            "the CSV ends inside a quoted field",
        ));
    }
    if start < data.len() {
        out.push((start, data.len()));
    }
    Ok(out)
}

fn count_quotes(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'"').count()
}

pub(crate) fn record<'a>(data: &'a [u8], records: &[(usize, usize)], i: usize) -> &'a [u8] {
    records
        .get(i)
        .and_then(|&(s, e)| data.get(s..e))
        .unwrap_or_default()
}

fn find_header(data: &[u8], records: &[(usize, usize)]) -> Result<usize> {
    let mut tool_errors = Vec::new();
    for i in 0..records.len() {
        let line = record(data, records, i);
        if line.starts_with(b"\"ID\"") || line.starts_with(b"ID,") {
            return Ok(i);
        }
        if line.starts_with(b"==ERROR==") {
            tool_errors.push(String::from_utf8_lossy(line).into_owned());
        }
        let console = line.starts_with(b"==") || line.iter().all(u8::is_ascii_whitespace);
        if line.starts_with(b"Launch Settings") || line.starts_with(b"Session Info") {
            return Err(Error::input(
                codes::WRONG_PAGE,
                "this is a session page (--page session); pass it as the session of a raw or details page",
            )
            .with_expected("ncu --csv --page raw|details"));
        }
        if !console {
            let shown: String = String::from_utf8_lossy(line).chars().take(120).collect();
            return Err(Error::input(
                codes::FORMAT_INVALID,
                "not an ncu --csv export: the first line is not the \"ID\",... header",
            )
            .with_expected("\"ID\",\"Process ID\",... (ncu --csv --page raw|details)")
            .with_observed(shown));
        }
    }
    if let Some(first) = tool_errors.first() {
        return Err(Error::input(
            codes::TOOL_ERROR,
            format!("ncu printed an error instead of a table: {first}"),
        ));
    }
    Err(Error::input(
        codes::FORMAT_INVALID,
        "not an ncu --csv export: no \"ID\",... header line",
    )
    .with_expected("\"ID\",\"Process ID\",... (ncu --csv --page raw|details)"))
}

/// Splits one record into fields, unquoting (`""` inside quotes is one `"`).
pub(crate) fn fields(rec: &[u8]) -> Result<Vec<Cow<'_, [u8]>>> {
    let mut out = Vec::new();
    for_each_field(rec, |_, span| out.push(span.bytes(rec)))?;
    Ok(out)
}

/// Where a field's content lies in its record; `escaped` when it holds doubled quotes to undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FieldSpan {
    pub start: usize,
    pub end: usize,
    pub escaped: bool,
}

impl FieldSpan {
    /// The field's bytes, unescaped.
    pub fn bytes(self, rec: &[u8]) -> Cow<'_, [u8]> {
        let raw = rec.get(self.start..self.end).unwrap_or_default();
        if self.escaped {
            unescape(raw)
        } else {
            Cow::Borrowed(raw)
        }
    }
}

/// Calls `each(index, span)` for every field of a record, in order, and returns how many there were;
/// the streaming form of [`fields`] for the hot loop of the raw page.
pub(crate) fn for_each_field(rec: &[u8], mut each: impl FnMut(usize, FieldSpan)) -> Result<usize> {
    let mut pos = 0usize;
    let mut index = 0usize;
    loop {
        let (span, next) = field_at(rec, pos)?;
        each(index, span);
        index += 1;
        match next {
            Some(n) => pos = n,
            None => return Ok(index),
        }
    }
}

/// The field starting at `pos` and where the next one starts (`None` at the end of the record).
fn field_at(rec: &[u8], pos: usize) -> Result<(FieldSpan, Option<usize>)> {
    let rest = rec.get(pos..).unwrap_or_default();
    if rest.first() != Some(&b'"') {
        let end = memchr::memchr(b',', rest).unwrap_or(rest.len());
        if rest.get(..end).unwrap_or_default().contains(&b'"') {
            return Err(bad_quote());
        }
        let span = FieldSpan {
            start: pos,
            end: pos + end,
            escaped: false,
        };
        return Ok((span, (end < rest.len()).then_some(pos + end + 1)));
    }
    let mut i = 1usize;
    let mut escaped = false;
    loop {
        let Some(q) = rest.get(i..).and_then(|r| memchr::memchr(b'"', r)) else {
            return Err(bad_quote());
        };
        let q = i + q;
        if rest.get(q + 1) == Some(&b'"') {
            escaped = true;
            i = q + 2;
            continue;
        }
        let span = FieldSpan {
            start: pos + 1,
            end: pos + q,
            escaped,
        };
        return match rest.get(q + 1) {
            None => Ok((span, None)),
            Some(b',') => Ok((span, Some(pos + q + 2))),
            Some(_) => Err(bad_quote()),
        };
    }
}

fn bad_quote() -> Error {
    Error::input(
        codes::FORMAT_INVALID,
        "malformed CSV: a quote in an unquoted field or text after a closing quote",
    )
}

fn text(field: &[u8]) -> String {
    String::from_utf8_lossy(field).into_owned()
}

fn int(field: &[u8]) -> Option<i64> {
    match number::parse(field) {
        Parsed::Number(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => Some(v as i64),
        _ => None,
    }
}

fn opt_text(field: Option<&[u8]>) -> Option<String> {
    field.filter(|f| !f.is_empty()).map(text)
}

/// Positions of the identity columns in a header.
struct IdentityColumns {
    at: HashMap<&'static str, usize>,
}

impl IdentityColumns {
    fn new(header: &[String]) -> Self {
        let at = IDENTITY
            .iter()
            .filter_map(|name| header.iter().position(|h| h == name).map(|i| (*name, i)))
            .collect();
        Self { at }
    }

    fn is_identity(&self, col: usize) -> bool {
        self.at.values().any(|c| *c == col)
    }

    fn get<'a>(&self, row: &'a [Cow<'a, [u8]>], name: &str) -> Option<&'a [u8]> {
        self.at
            .get(name)
            .and_then(|c| row.get(*c))
            .map(AsRef::as_ref)
    }

    fn launch(&self, row: &[Cow<'_, [u8]>], line: usize) -> Result<LaunchIdentity> {
        let id_field = self.get(row, "ID").unwrap_or_default();
        let id = int(id_field).ok_or_else(|| {
            Error::input(
                codes::VALUE_INVALID,
                format!(
                    "record {line}: the ID cell {:?} is not an integer",
                    text(id_field)
                ),
            )
        })?;
        let kernel_name = self.get(row, "Kernel Name").map(text).unwrap_or_default();
        let demangled = kernel_name.contains('(').then(|| kernel_name.clone());
        let function = demangled
            .as_deref()
            .and_then(function_name)
            .or_else(|| (!kernel_name.is_empty()).then(|| kernel_name.clone()));
        Ok(LaunchIdentity {
            id,
            kernel_demangled: demangled,
            kernel_function: function,
            kernel_mangled: None,
            process_id: self.get(row, "Process ID").and_then(int),
            process_name: opt_text(self.get(row, "Process Name")),
            host_name: opt_text(self.get(row, "Host Name")),
            context: self.get(row, "Context").and_then(int),
            stream: self.get(row, "Stream").and_then(int),
            block: self
                .get(row, "Block Size")
                .and_then(|f| parse_dim3(&text(f))),
            grid: self
                .get(row, "Grid Size")
                .and_then(|f| parse_dim3(&text(f))),
            device: self.get(row, "Device").and_then(int),
            compute_capability: opt_text(self.get(row, "CC")),
            kernel_name,
        })
    }
}

/// ncu's "function" base name from a demangled signature: `void ns::kern<T>(int)` → `kern`.
pub fn function_name(demangled: &str) -> Option<String> {
    let bytes = demangled.trim_end().as_bytes();
    // Find the '(' that opens the parameter list: scan back from the last ')' to its match.
    let close = bytes.iter().rposition(|b| *b == b')')?;
    let mut depth = 0i32;
    let mut open = None;
    for i in (0..=close).rev() {
        match bytes.get(i) {
            Some(b')') => depth += 1,
            Some(b'(') => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let prefix = demangled.get(..open?)?;
    let mut name = String::new();
    let mut depth = 0i32;
    // Keep only depth-0 characters (drops template arguments), then the last `::` / space segment.
    for ch in prefix.chars() {
        match ch {
            '<' => depth += 1,
            '>' => depth -= 1,
            _ if depth == 0 => name.push(ch),
            _ => {}
        }
    }
    let last = name
        .rsplit(' ')
        .next()
        .unwrap_or_default()
        .rsplit("::")
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    (!last.is_empty()).then_some(last)
}

/// What a raw-page column holds.
#[derive(Debug, Clone, Copy)]
enum Role {
    Identity,
    Metric(usize),
}

/// One launch row of a raw page: its identity and the text cells of the columns parsed with it.
type ParsedRow = (LaunchIdentity, Vec<(usize, String)>);

fn read_raw(data: Vec<u8>, header: &[String], body: &[(usize, usize)]) -> Result<Report> {
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
            "{} cells, {:?} under \"ID\"",
            units_row.len(),
            text(id_unit)
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
        if super::launches::reads_metric(&column.name) {
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
                        match number::parse(&cell) {
                            Parsed::Number(v) => {
                                if let Some(slot) = eager.get_mut(k) {
                                    *slot = v * factors.get(*j).copied().unwrap_or(1.0);
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

fn csv_tool() -> ToolInfo {
    ToolInfo {
        version: None,
        version_text: None,
        version_source: "none".to_string(),
        command_line: None,
    }
}

fn check_unique_ids(launches: &[LaunchIdentity]) -> Result<()> {
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

fn read_details(data: &[u8], header: &[String], body: &[(usize, usize)]) -> Result<Report> {
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
                match metrics::label_metric(&section, &name) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ncu::model::Cell;

    #[test]
    fn fields_unquote_and_unescape() {
        let f = fields(br#""a","b ""q"" c",,"1,234.5""#).unwrap();
        let f: Vec<&[u8]> = f.iter().map(AsRef::as_ref).collect();
        assert_eq!(f, vec![&b"a"[..], b"b \"q\" c", b"", b"1,234.5"]);
    }

    #[test]
    fn malformed_quotes_are_format_errors() {
        assert_eq!(
            fields(br#""a"x,"b""#).unwrap_err().code,
            codes::FORMAT_INVALID
        );
        assert_eq!(fields(br#"a"b"#).unwrap_err().code, codes::FORMAT_INVALID);
    }

    #[test]
    fn unterminated_quote_is_truncation() {
        assert_eq!(
            split_records(b"\"ID\",\"x\n").unwrap_err().code,
            codes::FILE_TRUNCATED
        );
    }

    const RAW: &str = "==PROF== Connected to process 1\n\
        \"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes_read.sum\",\"x__odd\"\n\
        \"\",\"\",\"us\",\"Kbyte\",\"\"\n\
        \"0\",\"k(int)\",\"1.50\",\"4,096.5\",\"n/a\"\n\
        \"1\",\"k(int)\",\"2\",\"\",\"text\"\n";

    #[test]
    fn raw_page_normalises_units_and_keeps_text() {
        let r = read(RAW.as_bytes().to_vec()).unwrap();
        assert_eq!(r.format, SourceFormat::RawCsv);
        assert_eq!(r.launches.len(), 2);
        assert_eq!(r.launches[0].kernel_function.as_deref(), Some("k"));
        let d = r.metrics.column_index("gpu__time_duration.sum").unwrap();
        assert_eq!(r.metrics.cell(0, d), Cell::Number(1500.0));
        assert_eq!(r.metrics.cell(1, d), Cell::Number(2000.0));
        let b = r.metrics.column_index("dram__bytes_read.sum").unwrap();
        assert_eq!(r.metrics.cell(0, b), Cell::Number(4_096_500.0));
        assert_eq!(r.metrics.cell(1, b), Cell::Missing);
        let x = r.metrics.column_index("x__odd").unwrap();
        assert_eq!(r.metrics.cell(0, x), Cell::Missing);
        assert_eq!(r.metrics.cell(1, x), Cell::Text("text"));
    }

    #[test]
    fn raw_page_without_units_row_is_rejected() {
        let text = "\"ID\",\"Kernel Name\",\"m__x\"\n\"0\",\"k\",\"1\"\n";
        assert_eq!(
            read(text.as_bytes().to_vec()).unwrap_err().code,
            codes::UNITS_ROW_MISSING
        );
    }

    #[test]
    fn truncated_last_row_is_truncation() {
        let cut = &RAW[..RAW.len() - 10];
        assert_eq!(
            read(cut.as_bytes().to_vec()).unwrap_err().code,
            codes::FILE_TRUNCATED
        );
    }

    #[test]
    fn duplicate_columns_are_rejected() {
        let text = "\"ID\",\"Kernel Name\",\"m__x\",\"m__x\"\n\"\",\"\",\"\",\"\"\n\"0\",\"k\",\"1\",\"2\"\n";
        assert_eq!(
            read(text.as_bytes().to_vec()).unwrap_err().code,
            codes::FORMAT_INVALID
        );
    }

    #[test]
    fn header_only_is_an_empty_report() {
        let text = "\"ID\",\"Kernel Name\",\"m__x\"\n\"\",\"\",\"\"\n";
        assert_eq!(
            read(text.as_bytes().to_vec()).unwrap_err().code,
            codes::REPORT_EMPTY
        );
    }

    #[test]
    fn garbage_is_format_invalid() {
        assert_eq!(
            read(b"\x00\x01garbage\n".to_vec()).unwrap_err().code,
            codes::FORMAT_INVALID
        );
        assert_eq!(read(Vec::new()).unwrap_err().code, codes::FORMAT_INVALID);
    }

    #[test]
    fn tool_error_without_table() {
        let text = "==PROF== Connected\n==ERROR== ERR_NVGPUCTRPERM - no permission\n";
        assert_eq!(
            read(text.as_bytes().to_vec()).unwrap_err().code,
            codes::TOOL_ERROR
        );
    }

    #[test]
    fn function_names_like_ncu() {
        assert_eq!(
            function_name("vec_add(const float4 *, const float4 *, float4 *, int)").as_deref(),
            Some("vec_add")
        );
        assert_eq!(
            function_name(
                "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<int, (bool)1>>(T1::Params)"
            )
            .as_deref(),
            Some("Kernel")
        );
        assert_eq!(function_name("no_parens"), None);
    }
}
