//! CUDA API facts: `cuda_api_sum`, the hot path over tens of millions of runtime/driver calls, read as
//! three integer columns in a parallel scan and grouped by the interned name id.

use super::describe::Summary;
use super::fields;
use super::scan;
use super::schema::{Schema, RUNTIME};
use super::select::Selection;
use super::strings::Strings;
use super::summary::{self, Groups};
use crate::error::Result;
use crate::table::Table;
use rayon::prelude::*;

/// nsys' `_v` rule: a name whose 6th- and 5th-last characters are `_v` loses its last 6 characters
/// (`cudaLaunchKernel_v7000` → `cudaLaunchKernel`); other suffixes stay
/// (`cudaLaunchKernelExC_v11060` keeps its 7-character suffix).
pub fn strip_version(name: &str) -> &str {
    let chars: Vec<(usize, char)> = name.char_indices().collect();
    let n = chars.len();
    if n < 6 {
        return name;
    }
    match (chars.get(n - 6), chars.get(n - 5)) {
        (Some(&(at, '_')), Some(&(_, 'v'))) => name.get(..at).unwrap_or(name),
        _ => name,
    }
}

/// `cuda_api_sum`: runtime and driver call durations grouped by name (`_v` suffix stripped for
/// display, one row per distinct name id), sorted by total time descending.
pub fn api_sum(schema: &Schema, strings: &Strings, sel: &Selection) -> Result<Table> {
    let mut rows: Vec<(String, Summary)> = Vec::new();
    if let Some(table) = schema.table(&RUNTIME) {
        let name = table.actual.clone();
        let needs_tid = sel.needs_thread();
        let columns: &[&str] = if needs_tid {
            &["start", "end", "nameId", "globalTid"]
        } else {
            &["start", "end", "nameId"]
        };
        let parts = scan::scan(
            schema,
            table,
            columns,
            Groups::default,
            |acc: &mut Groups, row| {
                let (start, end) = row.interval(0, 1)?;
                let tid = if needs_tid {
                    row.opt_int(3)?.unwrap_or(0)
                } else {
                    0
                };
                if sel.keep_cpu(start, end, tid) {
                    acc.push(row.int(2)?, end - start);
                }
                Ok(())
            },
        )?;
        let merged = summary::merge(parts, |id| strings.resolve(id, &name, "nameId"))?;
        let mut described = summary::describe_all(merged);
        // nsys orders by total only; equal totals keep the name-id order here.
        described.par_sort_by(|a, b| b.1.total.cmp(&a.1.total));
        rows = described
            .into_iter()
            .map(|(idx, s)| (strip_version(strings.value(idx)).to_string(), s))
            .collect();
    }
    summary::time_table(fields::CUDA_API_SUM, &rows, "num_calls", "name")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_only_six_character_version_suffixes() {
        assert_eq!(strip_version("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
        assert_eq!(strip_version("cuGetProcAddress_v2"), "cuGetProcAddress_v2");
        assert_eq!(
            strip_version("cudaLaunchKernelExC_v11060"),
            "cudaLaunchKernelExC_v11060"
        );
        assert_eq!(
            strip_version("cudaStreamIsCapturing_v10000"),
            "cudaStreamIsCapturing_v10000"
        );
        assert_eq!(strip_version("cudaMemcpyAsync_v3020"), "cudaMemcpyAsync");
        assert_eq!(strip_version("_v1234"), "");
        assert_eq!(strip_version("abc"), "abc");
    }
}
