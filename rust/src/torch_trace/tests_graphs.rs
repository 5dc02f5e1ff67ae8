//! Tests of CUDA-graph replays in Kineto traces and of the per-op GPU totals (issue 12), on the real
//! H200 traces: `graphs/graph_trace.json` (6 decode steps replayed as one CUDA graph, 52 kernels
//! each) and `torch/eager_trace.json`.

use super::*;
use crate::table::Table;
use arrow_array::{Array, Int64Array, StringArray};
use std::path::PathBuf;

fn fixture(rel: &str) -> PathBuf {
    crate::testdata::fixtures().join(rel)
}

fn row_of(t: &Table, key: &str, name: &str, col: &str) -> Vec<i64> {
    let mut out = Vec::new();
    for b in &t.batches {
        let names = b.column_by_name(key).unwrap();
        let names = names.as_any().downcast_ref::<StringArray>().unwrap();
        let vals = b.column_by_name(col).unwrap();
        let vals = vals.as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..names.len() {
            if names.value(i) == name {
                out.push(vals.value(i));
            }
        }
    }
    out
}

/// `aten::sum` nested in `aten::sum`: the trace has 6 GPU events (36,385 ns) launched under
/// `aten::sum`; each counts once in the `aten::sum` row, not once per enclosing `aten::sum`.
#[test]
fn nested_same_name_ops_count_gpu_work_once() {
    let set = open(&fixture("h200/torch/eager_trace.json")).unwrap();
    let t = ops::table(&set).unwrap();
    assert_eq!(row_of(&t, "name", "aten::sum", "gpu_events_total"), vec![6]);
    assert_eq!(
        row_of(&t, "name", "aten::sum", "gpu_time_total_ns"),
        vec![36_385]
    );
}

fn ints(t: &Table, col: &str) -> Vec<i64> {
    let mut out = Vec::new();
    for b in &t.batches {
        let a = b.column_by_name(col).unwrap();
        let a = a.as_any().downcast_ref::<Int64Array>().unwrap();
        out.extend((0..a.len()).map(|i| a.value(i)));
    }
    out
}

/// One graph replayed 6 times: each `cudaGraphLaunch` launched 52 kernels; GPU time per execution
/// is first kernel start to last kernel end (values computed from the JSON by hand).
#[test]
fn graph_replays_make_one_graph_row() {
    let set = open(&fixture("h200/graphs/graph_trace.json")).unwrap();
    let t = graphs::table(&set).unwrap();
    assert_eq!(ints(&t, "executions"), vec![6]);
    assert_eq!(ints(&t, "kernels_per_execution"), vec![52]);
    assert_eq!(ints(&t, "gpu_total_ns"), vec![1_252_666]);
    assert_eq!(ints(&t, "gpu_median_ns"), vec![208_383]);
    assert_eq!(ints(&t, "gpu_p90_ns"), vec![210_110]);
    assert_eq!(ints(&t, "host_median_ns"), vec![52_208]);
    assert_eq!(ints(&t, "host_max_ns"), vec![111_372]);
    assert_eq!(ints(&t, "launch_latency_median_ns"), vec![57_333]);
}

/// Graph kernels are not measured from the `cudaGraphLaunch` that started the whole graph: the
/// ordinary latency covers the 142 kernels launched one by one; graph launches are apart.
#[test]
fn graph_kernels_are_left_out_of_launch_latency() {
    let set = open(&fixture("h200/graphs/graph_trace.json")).unwrap();
    let l = launches::latency(&set.traces[0]).unwrap();
    assert_eq!(l.graph_kernels, 312);
    assert_eq!(l.from_call_start.as_ref().unwrap().count, 142);
    let g = l.graph.unwrap();
    assert_eq!((g.executions, g.kernels), (6, 312));
    assert_eq!(g.launch_latency.p50_ns, 57_333);
    assert_eq!(g.node_gap.unwrap().count, 6 * 51);
}
