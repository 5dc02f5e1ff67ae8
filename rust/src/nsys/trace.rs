//! The GPU trace: one row per operation (kernel, memcpy, memset, CUDA-graph execution of a
//! graph-level trace) with its device, stream and interval, clipped to the window — the rows a
//! timeline plot draws (`gpuopt nsys report --html`). Sorted by (start, end, kind, rowid).

use super::fields;
use super::memory::enum_labels;
use super::ops::{self, Op, OpKind};
use super::out::Columns;
use super::schema::{Schema, ENUM_MEMCPY_OPER};
use super::select::Selection;
use super::strings::Strings;
use super::timeline::{clipped, GPU_WORK};
use crate::error::Result;
use crate::intervals::Span;
use crate::table::Table;

/// The name nsys' `cuda_gpu_trace` report gives an operation.
fn label(op: &Op, strings: &Strings, opers: &std::collections::BTreeMap<i64, String>) -> String {
    match op.kind {
        OpKind::Kernel => strings
            .value(u32::try_from(op.name).unwrap_or(u32::MAX))
            .to_string(),
        OpKind::Memcpy => format!(
            "[CUDA memcpy {}]",
            opers.get(&op.name).map_or("Unknown", String::as_str)
        ),
        OpKind::Memset => "[CUDA memset]".to_string(),
        OpKind::Graph => format!("[CUDA graph {} exec {}]", op.name, op.graph),
    }
}

pub fn operations(schema: &Schema, strings: &Strings, sel: &Selection) -> Result<Table> {
    let all = ops::load(schema, strings, sel, GPU_WORK)?;
    let opers = enum_labels(schema, &ENUM_MEMCPY_OPER)?;
    let kept: Vec<(Span, &Op)> = all
        .iter()
        .filter_map(|op| clipped(op, sel).map(|span| (span, op)))
        .collect();
    Columns::of(fields::OPERATIONS)
        .int("device_id", kept.iter().map(|(_, o)| o.device).collect())
        .int("stream_id", kept.iter().map(|(_, o)| o.stream).collect())
        .text(
            "kind",
            kept.iter()
                .map(|(_, o)| o.kind.as_str().to_string())
                .collect(),
        )
        .int("start_ns", kept.iter().map(|(s, _)| s.start).collect())
        .int("end_ns", kept.iter().map(|(s, _)| s.end).collect())
        .int("duration_ns", kept.iter().map(|(s, _)| s.len()).collect())
        .text(
            "name",
            kept.iter()
                .map(|(_, o)| label(o, strings, &opers))
                .collect(),
        )
        .int("bytes", kept.iter().map(|(_, o)| o.bytes).collect())
        .build()
}

#[cfg(test)]
mod tests {
    use crate::nsys::select::Request;
    use crate::nsys::Report;
    use crate::testdata::fixtures;
    use arrow_array::{Array, Int64Array, StringArray};

    fn ints(t: &crate::table::Table, name: &str) -> Vec<i64> {
        let mut out = Vec::new();
        for b in &t.batches {
            if let Some(c) = b
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
            {
                out.extend(c.iter().flatten());
            }
        }
        out
    }

    #[test]
    fn eager_export_has_one_row_per_operation() {
        let report = Report::open(&fixtures().join("h200/nsys/eager.sqlite")).expect("opens");
        let t = report.operations(&Request::default()).expect("operations");
        // 176 kernels, 32 memcpys, 58 memsets (tests/data/fixtures/README.md).
        assert_eq!(t.num_rows(), 176 + 32 + 58);
        let kinds: Vec<String> = t
            .batches
            .iter()
            .filter_map(|b| b.column_by_name("kind"))
            .filter_map(|c| c.as_any().downcast_ref::<StringArray>().cloned())
            .flat_map(|c| (0..c.len()).map(move |i| c.value(i).to_string()))
            .collect();
        assert_eq!(kinds.iter().filter(|k| *k == "kernel").count(), 176);
        assert_eq!(kinds.iter().filter(|k| *k == "memcpy").count(), 32);
        let starts = ints(&t, "start_ns");
        assert!(starts.windows(2).all(|w| w.first() <= w.get(1)));
        let (s, e, d) = (
            ints(&t, "start_ns"),
            ints(&t, "end_ns"),
            ints(&t, "duration_ns"),
        );
        assert!(s.iter().zip(&e).zip(&d).all(|((s, e), d)| e - s == *d));
    }
}
