//! The bytes a `gpuopt nsys stats` command prints, made here so that the command need not build a
//! DataFrame or a pydantic document: the report as `nsys stats --format csv` prints it (gpuopt's one
//! CSV renderer: `gpuopt.nsys.stats_csv`), and the table as the `--json` envelope's `data.table`
//! holds it (polars dtype names, `--limit` rows).
//!
//! Tests compare the CSV with NVIDIA's own files, and the envelope with the one pydantic prints
//! (`gpuopt._tables.table_data`).

use super::codes;
use crate::error::{Error, Result};
use crate::table::Table;
use arrow_array::{Array, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::DataType;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// How one CSV cell is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fmt {
    /// As is (integers, text).
    Plain,
    /// SQLite's `round(x, 1)`.
    Round1,
    /// Bytes as MB with three decimals.
    Mb,
}

/// One CSV column: the gpuopt column, nsys's header, the cell format.
type CsvColumn = (String, String, Fmt);

const STATS: [(&str, &str); 5] = [
    ("avg", "Avg"),
    ("med", "Med"),
    ("min", "Min"),
    ("max", "Max"),
    ("stddev", "StdDev"),
];

fn stat_fmt(key: &str) -> Fmt {
    if key == "min" || key == "max" {
        Fmt::Plain
    } else {
        Fmt::Round1
    }
}

fn col(name: &str, header: &str, fmt: Fmt) -> CsvColumn {
    (name.to_string(), header.to_string(), fmt)
}

fn time_columns(count: (&str, &str), name: (&str, &str)) -> Vec<CsvColumn> {
    let mut cols = vec![
        col("time_pct", "Time (%)", Fmt::Round1),
        col("total_time_ns", "Total Time (ns)", Fmt::Plain),
        col(count.0, count.1, Fmt::Plain),
    ];
    for (k, h) in STATS {
        cols.push(col(&format!("{k}_ns"), &format!("{h} (ns)"), stat_fmt(k)));
    }
    cols.push(col(name.0, name.1, Fmt::Plain));
    cols
}

/// The columns of a report's CSV, as `nsys stats --format csv` heads them (None: no such report).
fn csv_columns(report: &str) -> Option<Vec<CsvColumn>> {
    Some(match report {
        "cuda_gpu_kern_sum" => time_columns(("instances", "Instances"), ("name", "Name")),
        "cuda_api_sum" => time_columns(("num_calls", "Num Calls"), ("name", "Name")),
        "cuda_gpu_mem_time_sum" => time_columns(("count", "Count"), ("operation", "Operation")),
        "cuda_gpu_mem_size_sum" => {
            let mut cols = vec![
                col("total_bytes", "Total (MB)", Fmt::Mb),
                col("count", "Count", Fmt::Plain),
            ];
            for (k, h) in STATS {
                cols.push(col(&format!("{k}_bytes"), &format!("{h} (MB)"), Fmt::Mb));
            }
            cols.push(col("operation", "Operation", Fmt::Plain));
            cols
        }
        "nvtx_sum" => {
            let mut cols = time_columns(("instances", "Instances"), ("style", "Style"));
            cols.push(col("range", "Range", Fmt::Plain));
            cols
        }
        "cuda_kern_exec_sum" => {
            let mut cols = vec![
                col("pid", "PID", Fmt::Plain),
                col("tid", "TID", Fmt::Plain),
                col("device_id", "DevId", Fmt::Plain),
                col("count", "Count", Fmt::Plain),
                col("q_count", "QCount", Fmt::Plain),
            ];
            for p in ["t", "a", "q", "k"] {
                for (k, h) in STATS {
                    let header = format!("{}{h} (ns)", p.to_uppercase());
                    cols.push(col(&format!("{p}_{k}_ns"), &header, stat_fmt(k)));
                }
            }
            cols.push(col("api_name", "API Name", Fmt::Plain));
            cols.push(col("kernel_name", "Kernel Name", Fmt::Plain));
            cols
        }
        "nvtx_kern_sum" => {
            let mut cols = vec![
                col("range", "NVTX Range", Fmt::Plain),
                col("style", "Style", Fmt::Plain),
                col("pid", "PID", Fmt::Plain),
                col("tid", "TID", Fmt::Plain),
                col("nvtx_instances", "NVTX Inst", Fmt::Plain),
                col("kernel_instances", "Kern Inst", Fmt::Plain),
                col("total_time_ns", "Total Time (ns)", Fmt::Plain),
            ];
            for (k, h) in STATS {
                cols.push(col(&format!("{k}_ns"), &format!("{h} (ns)"), stat_fmt(k)));
            }
            cols.push(col("kernel_name", "Kernel Name", Fmt::Plain));
            cols
        }
        _ => return None,
    })
}

/// What `nsys stats` prints instead of a report whose source table the export lacks (seen with
/// nsys 2025.3 on an export without NVTX_EVENTS); other missing tables keep the header, no rows.
const NSYS_SKIPPED: &[(&str, &str)] = &[("NVTX_EVENTS", "NV Tools Extension (NVTX) data")];

/// One cell of a table, borrowed.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cell<'a> {
    Null,
    Int(i64),
    Float(f64),
    Text(&'a str),
}

/// A column of one batch.
enum ColumnRef<'a> {
    Int(&'a Int64Array),
    Float(&'a Float64Array),
    Text(&'a StringArray),
}

impl ColumnRef<'_> {
    fn cell(&self, row: usize) -> Cell<'_> {
        match self {
            ColumnRef::Int(a) if a.is_valid(row) => Cell::Int(a.value(row)),
            ColumnRef::Float(a) if a.is_valid(row) => Cell::Float(a.value(row)),
            ColumnRef::Text(a) if a.is_valid(row) => Cell::Text(a.value(row)),
            _ => Cell::Null,
        }
    }
}

fn unsupported_type(name: &str, dtype: &DataType) -> Error {
    Error::internal(
        "render_unsupported",
        format!("column {name} has type {dtype}, which the stats renderer does not write"),
    )
}

fn column_of<'a>(batch: &'a RecordBatch, name: &str) -> Result<ColumnRef<'a>> {
    let array = batch.column_by_name(name).ok_or_else(|| {
        Error::internal(
            "render_column_missing",
            format!("the report has no column {name}"),
        )
    })?;
    let any = array.as_any();
    if let Some(a) = any.downcast_ref::<Int64Array>() {
        return Ok(ColumnRef::Int(a));
    }
    if let Some(a) = any.downcast_ref::<Float64Array>() {
        return Ok(ColumnRef::Float(a));
    }
    if let Some(a) = any.downcast_ref::<StringArray>() {
        return Ok(ColumnRef::Text(a));
    }
    Err(unsupported_type(name, array.data_type()))
}

/// SQLite's `round(x, 1)` as Python's `Decimal(x).quantize(Decimal("0.1"), ROUND_HALF_UP)` writes
/// it: the exact binary value rounded at one decimal, ties away from zero. Rust's `{:.1}` rounds
/// the exact value too, but ties to even; an exact tie at one decimal is a multiple of 0.05 that is
/// a binary fraction, i.e. a value whose fraction is .25 or .75, so only those are adjusted.
pub fn round1(x: f64) -> String {
    if !x.is_finite() {
        return python_special(x);
    }
    let quarters = x.abs() * 4.0;
    if quarters < 1e15 && quarters.fract() == 0.0 && quarters % 2.0 == 1.0 {
        // |x| = k + 0.25 or k + 0.75 exactly, so 10|x| = n + 0.5 exactly: away from zero is n + 1.
        let tenths = (x.abs() * 10.0).floor() as u64 + 1;
        let sign = if x < 0.0 { "-" } else { "" };
        return format!("{sign}{}.{}", tenths / 10, tenths % 10);
    }
    format!("{x:.1}")
}

fn python_special(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_string()
    } else if x > 0.0 {
        "Infinity".to_string()
    } else {
        "-Infinity".to_string()
    }
}

/// Python's `f"{x / 1e6:.3f}"` (correctly rounded, ties to even, as Rust's `{:.3}`).
fn megabytes(x: f64) -> String {
    let mb = x / 1e6;
    if mb.is_nan() {
        return "nan".to_string();
    }
    if mb.is_infinite() {
        return if mb > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    format!("{mb:.3}")
}

/// Python's `repr` of a float (`str(x)`): the shortest digits that read back, with `.0` on whole
/// values and an exponent from 1e16 up and below 1e-4.
fn python_float(x: f64) -> String {
    if !x.is_finite() {
        return match python_special(x).as_str() {
            "NaN" => "nan".to_string(),
            "Infinity" => "inf".to_string(),
            _ => "-inf".to_string(),
        };
    }
    let abs = x.abs();
    if abs != 0.0 && !(1e-4..1e16).contains(&abs) {
        // Rust's `{:e}` is shortest too: "1.5e-7" -> Python "1.5e-07".
        let text = format!("{x:e}");
        let (mantissa, exp) = text.split_once('e').unwrap_or((text.as_str(), "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let text = format!("{x}");
    if text.contains('.') {
        text
    } else {
        format!("{text}.0")
    }
}

fn csv_cell(cell: Cell<'_>, fmt: Fmt) -> String {
    match (cell, fmt) {
        (Cell::Null, _) => String::new(),
        (Cell::Int(v), Fmt::Round1) => round1(v as f64),
        (Cell::Float(v), Fmt::Round1) => round1(v),
        (Cell::Int(v), Fmt::Mb) => megabytes(v as f64),
        (Cell::Float(v), Fmt::Mb) => megabytes(v),
        (Cell::Int(v), Fmt::Plain) => v.to_string(),
        (Cell::Float(v), Fmt::Plain) => python_float(v),
        (Cell::Text(t), _) => t.to_string(),
    }
}

/// Appends one field as Python's `csv.writer` (QUOTE_MINIMAL, `lineterminator="\n"`) writes it.
fn push_field(out: &mut String, field: &str, only_field: bool) {
    let special = field
        .bytes()
        .any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'));
    if special || (only_field && field.is_empty()) {
        out.push('"');
        out.push_str(&field.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(field);
    }
}

fn push_row(out: &mut String, fields: &[String]) {
    let only = fields.len() == 1;
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_field(out, f, only);
    }
    out.push('\n');
}

/// A stats report as `nsys stats --format csv` prints it (what `gpuopt.nsys.stats_csv` returns).
/// `missing`: the source tables of the report the export lacks; with `path`, a report nsys would
/// skip is nsys's own `SKIPPED:` line.
pub fn stats_csv(
    table: &Table,
    report: &str,
    path: Option<&str>,
    missing: &[String],
) -> Result<String> {
    if let Some(path) = path {
        for m in missing {
            if let Some((_, what)) = NSYS_SKIPPED.iter().find(|(t, _)| t == m) {
                return Ok(format!("SKIPPED: {path} does not contain {what}.\n"));
            }
        }
    }
    let columns = csv_columns(report).ok_or_else(|| {
        Error::input(codes::REPORT_UNKNOWN, format!("no report named {report:?}"))
            .with_expected(super::STATS_REPORTS.join(", "))
    })?;
    let mut out = String::new();
    let header: Vec<String> = columns.iter().map(|c| c.1.clone()).collect();
    push_row(&mut out, &header);
    for batch in &table.batches {
        let refs = columns
            .iter()
            .map(|c| column_of(batch, &c.0))
            .collect::<Result<Vec<_>>>()?;
        for row in 0..batch.num_rows() {
            let fields: Vec<String> = refs
                .iter()
                .zip(&columns)
                .map(|(r, c)| csv_cell(r.cell(row), c.2))
                .collect();
            push_row(&mut out, &fields);
        }
    }
    Ok(out)
}

/// The polars dtype name of an Arrow type (what `str(frame.schema[c])` gives).
fn polars_dtype(dtype: &DataType) -> Option<&'static str> {
    Some(match dtype {
        DataType::Int64 => "Int64",
        DataType::Float64 => "Float64",
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "String",
        _ => return None,
    })
}

#[derive(Serialize)]
struct ColumnDef<'a> {
    name: &'a str,
    dtype: &'static str,
}

/// The rows of a table, at most `limit`, serialized as objects keyed by column name.
struct Rows<'a> {
    table: &'a Table,
    names: Vec<&'a str>,
    limit: usize,
}

impl Serialize for Rows<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.limit.min(self.table.num_rows())))?;
        let mut left = self.limit;
        for batch in &self.table.batches {
            let refs = self
                .names
                .iter()
                .map(|n| column_of(batch, n))
                .collect::<Result<Vec<_>>>()
                .map_err(serde::ser::Error::custom)?;
            for row in 0..batch.num_rows() {
                if left == 0 {
                    return seq.end();
                }
                left -= 1;
                seq.serialize_element(&Row {
                    names: &self.names,
                    refs: &refs,
                    row,
                })?;
            }
        }
        seq.end()
    }
}

struct Row<'a> {
    names: &'a [&'a str],
    refs: &'a [ColumnRef<'a>],
    row: usize,
}

impl Serialize for Row<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.names.len()))?;
        for (name, r) in self.names.iter().zip(self.refs) {
            match r.cell(self.row) {
                Cell::Null => map.serialize_entry(name, &())?,
                Cell::Int(v) => map.serialize_entry(name, &v)?,
                // NaN and infinities are null, as pydantic writes them.
                Cell::Float(v) if !v.is_finite() => map.serialize_entry(name, &())?,
                Cell::Float(v) => map.serialize_entry(name, &v)?,
                Cell::Text(t) => map.serialize_entry(name, t)?,
            }
        }
        map.end()
    }
}

/// `TableData`: the table in an envelope (name, typed columns, `limit` rows, 0 = all).
#[derive(Serialize)]
pub struct TableData<'a> {
    name: &'a str,
    columns: Vec<ColumnDef<'a>>,
    rows: Rows<'a>,
    total_rows: usize,
    truncated: bool,
}

impl<'a> TableData<'a> {
    pub fn new(name: &'a str, table: &'a Table, limit: usize) -> Result<Self> {
        let mut columns = Vec::new();
        for f in table.schema.fields() {
            let dtype = polars_dtype(f.data_type())
                .ok_or_else(|| unsupported_type(f.name(), f.data_type()))?;
            columns.push(ColumnDef {
                name: f.name().as_str(),
                dtype,
            });
        }
        let total = table.num_rows();
        let limit = if limit == 0 { total } else { limit.min(total) };
        Ok(Self {
            name,
            rows: Rows {
                table,
                names: columns.iter().map(|c| c.name).collect(),
                limit,
            },
            columns,
            total_rows: total,
            truncated: limit < total,
        })
    }
}

/// Serializes `value` as pydantic's `model_dump_json(indent=2)` does (two-space indent).
pub fn pretty<T: Serialize>(value: &T) -> Result<String> {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"  ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    value
        .serialize(&mut ser)
        .map_err(|e| Error::internal("serialize_failed", e.to_string()))?;
    String::from_utf8(out).map_err(|e| Error::internal("serialize_failed", e.to_string()))
}

/// The part of the capture a table covers (`NsysSelection`).
#[derive(Serialize)]
pub struct SelectionDoc {
    pub window_start_ns: Option<i64>,
    pub window_end_ns: Option<i64>,
    pub nvtx: Option<String>,
}

/// One input file's identity (`FileIdentity`), as the identity module computed it.
#[derive(Serialize)]
pub struct FileIdentityDoc {
    pub path: String,
    pub size_bytes: u64,
    pub blake3: String,
    pub from_cache: bool,
}

/// `NsysTableData`: one stats report of one `.sqlite` export (no `.nsys-rep` source).
#[derive(Serialize)]
pub struct NsysTableDoc<'a> {
    pub path: String,
    pub source: Option<()>,
    pub selection: SelectionDoc,
    pub report: &'a str,
    pub not_captured: Vec<String>,
    pub coverage: Vec<super::coverage::Coverage>,
    pub table: TableData<'a>,
}

#[derive(Serialize)]
struct ProvenanceDoc<'a> {
    gpuopt_version: &'a str,
    native_build_id: &'a str,
    inputs: Vec<FileIdentityDoc>,
}

#[derive(Serialize)]
struct EnvelopeDoc<'a, T: Serialize> {
    schema: &'a str,
    ok: bool,
    data: T,
    errors: [(); 0],
    unmodeled: [(); 0],
    provenance: ProvenanceDoc<'a>,
}

/// A successful `--json` envelope (no errors, nothing unmodeled) around `data`, as
/// `gpuopt.cli._output.emit_envelope` prints it.
pub fn envelope<T: Serialize>(
    schema: &str,
    data: T,
    gpuopt_version: &str,
    inputs: Vec<FileIdentityDoc>,
) -> Result<String> {
    pretty(&EnvelopeDoc {
        schema,
        ok: true,
        data,
        errors: [],
        unmodeled: [],
        provenance: ProvenanceDoc {
            gpuopt_version,
            native_build_id: crate::build_info::build_info().build_id,
            inputs,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::{Column, Unit};
    use crate::nsys::out::Columns;

    #[test]
    fn round1_is_sqlite_round_half_away_from_zero_on_exact_values() {
        assert_eq!(round1(11303.75), "11303.8");
        assert_eq!(round1(0.25), "0.3");
        assert_eq!(round1(-0.25), "-0.3");
        assert_eq!(round1(2.75), "2.8");
        assert_eq!(round1(7095.15), "7095.1"); // 7095.1499999... in binary
        assert_eq!(round1(17529.5), "17529.5");
        assert_eq!(round1(3855.9), "3855.9");
        assert_eq!(round1(0.0), "0.0");
        assert_eq!(round1(100.0), "100.0");
        assert_eq!(round1(59.70872245979824), "59.7");
    }

    #[test]
    fn floats_and_megabytes_read_as_python_writes_them() {
        assert_eq!(python_float(1.0), "1.0");
        assert_eq!(python_float(0.5), "0.5");
        assert_eq!(python_float(1.5e-7), "1.5e-07");
        assert_eq!(python_float(1e16), "1e+16");
        assert_eq!(python_float(123456.789), "123456.789");
        assert_eq!(megabytes(1_048_576.0), "1.049");
        assert_eq!(megabytes(62_500.0), "0.062"); // an exact tie: to even, as Python
        assert_eq!(megabytes(0.0), "0.000");
    }

    #[test]
    fn csv_quotes_as_python_csv_writer() {
        let mut out = String::new();
        push_row(&mut out, &["a,b".into(), "say \"hi\"".into(), "x".into()]);
        push_row(&mut out, &[String::new()]);
        assert_eq!(out, "\"a,b\",\"say \"\"hi\"\"\",x\n\"\"\n");
    }

    #[test]
    fn table_data_limits_rows_and_names_polars_dtypes() {
        const DECLARED: &[Column] = &[
            Column::float("time_pct", Unit::Pct, "share"),
            Column::int("total_time_ns", Unit::Ns, "total"),
            Column::float("x", Unit::Ratio, "x"),
            Column::text("name", "name"),
        ];
        let table = Columns::of(DECLARED)
            .float("time_pct", vec![75.0, 25.0])
            .int("total_time_ns", vec![3, 1])
            .opt_float("x", vec![None, Some(f64::NAN)])
            .text("name", vec!["k\u{e9}".into(), "b".into()])
            .build()
            .unwrap_or_else(|_| Table {
                schema: std::sync::Arc::new(arrow_schema::Schema::empty()),
                batches: vec![],
            });
        let doc = TableData::new("t", &table, 1).and_then(|d| pretty(&d));
        let expected = "{\n  \"name\": \"t\",\n  \"columns\": [\n    {\n      \"name\": \"time_pct\",\n      \"dtype\": \"Float64\"\n    },\n    {\n      \"name\": \"total_time_ns\",\n      \"dtype\": \"Int64\"\n    },\n    {\n      \"name\": \"x\",\n      \"dtype\": \"Float64\"\n    },\n    {\n      \"name\": \"name\",\n      \"dtype\": \"String\"\n    }\n  ],\n  \"rows\": [\n    {\n      \"time_pct\": 75.0,\n      \"total_time_ns\": 3,\n      \"x\": null,\n      \"name\": \"k\u{e9}\"\n    }\n  ],\n  \"total_rows\": 2,\n  \"truncated\": true\n}";
        assert_eq!(doc.ok().as_deref(), Some(expected));
    }
}
