//! `ncu --csv` exports: the raw page (one row per launch, a units row second) and the details page
//! (one row per launch × section × metric, plus rule rows). Console lines (`==PROF==`, `==WARNING==`)
//! before the header are skipped; an `==ERROR==` line with no table after it is ncu's error.

mod details;
mod identity;
mod raw;
mod tokenizer;

pub(crate) use tokenizer::{fields, record, split_records};

use crate::error::{Error, Result};
use crate::ncu::codes;

use crate::ncu::model::Report;

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
        Page::Raw => raw::read_raw(data, &header, body),
        Page::Details => details::read_details(&data, &header, body),
    }
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
            let start = records.get(i).map_or(0, |&(s, _)| s);
            let line_no =
                1 + memchr::memchr_iter(b'\n', data.get(..start).unwrap_or_default()).count();
            return Err(Error::input(
                codes::FORMAT_INVALID,
                format!("not an ncu --csv export: line {line_no} is not the \"ID\",... header"),
            )
            .with_expected("\"ID\",\"Process ID\",... (ncu --csv --page raw|details)")
            .with_observed(format!("line {line_no}: {}", crate::shape::of(line))));
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

#[cfg(test)]
mod tests {
    use super::identity::function_name;
    use super::*;
    use crate::ncu::model::{Cell, SourceFormat};

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
