//! Tests of the CUDA-graph model and of the facts issue 12 found wrong, on real fixtures: the two
//! H200 decode captures (`--cuda-graph-trace=graph` and `node`) and the public 2-GPU H100 export.

use super::select::Request;
use super::tests::{ints, texts};
use super::Report;
use std::path::PathBuf;

fn fixture(rel: &str) -> PathBuf {
    crate::testdata::fixtures().join(rel)
}

/// "Command buffer full (CUDA)" rows are CUDA's stalls, not profiler overhead: launch API time keeps
/// them (254.36 ms on device 0, the sum of the matched launch calls), and they are reported apart.
#[test]
fn cuda_stalls_are_not_subtracted_as_profiler_overhead() {
    let report = Report::open(&fixture("public/nsys/h100_2gpu_1s.sqlite")).unwrap();
    let t = report.timeline(&Request::default()).unwrap();
    let d0 = t.launch.iter().find(|l| l.device_id == 0).unwrap();
    assert_eq!(d0.matched, 816);
    assert_eq!(d0.api_time.total_ns, 254_358_752);
    assert_eq!(d0.api_time_excl_overhead.total_ns, 254_358_752);
    let d1 = t.launch.iter().find(|l| l.device_id == 1).unwrap();
    assert_eq!(d1.api_time_excl_overhead.total_ns, 254_073_631);
    assert_eq!(t.profiler_overhead.intervals, 0);
    assert_eq!(t.profiler_overhead.total_ns, 0);
    assert!(t
        .host_sync
        .iter()
        .all(|h| h.profiler_overhead_ns == 0 && h.blocked_excl_overhead_ns == h.blocked_ns));
    assert_eq!(t.cuda_overhead.len(), 1);
    let c = &t.cuda_overhead[0];
    assert_eq!(c.overhead_type, "Command buffer full (CUDA)");
    assert_eq!((c.intervals, c.total_ns), (198, 911_969_806));
}

/// Rows typed "(Profiler)" stay profiler overhead (mock.sqlite: PROFILER_OVERHEAD has 25 rows; its
/// CUPTI overhead rows are module and lazy loading, CUDA's own).
#[test]
fn profiler_typed_overhead_is_still_profiler_overhead() {
    let report = Report::open(&fixture("public/nsys/mock.sqlite")).unwrap();
    let t = report.timeline(&Request::default()).unwrap();
    assert_eq!(t.profiler_overhead.intervals, 25);
    let types: Vec<(&str, u64, i64)> = t
        .cuda_overhead
        .iter()
        .map(|c| (c.overhead_type.as_str(), c.intervals, c.total_ns))
        .collect();
    assert_eq!(
        types,
        vec![
            ("Lazy function loading (CUDA)", 2, 223_740),
            ("Runtime module loading (CUDA)", 4, 30_489_728)
        ]
    );
}

/// Graph-level trace: the 12 `CUPTI_ACTIVITY_KIND_GRAPH_TRACE` rows are GPU work. Busy time is the
/// union of kernels, memcpys, memsets and graph executions (3,076,650 ns, computed from the rows in
/// `tests/test_nsys_graphs.py`), not the 646,683 ns of the other three alone.
#[test]
fn graph_executions_are_busy_time_in_graph_level_traces() {
    let report = Report::open(&fixture("h200/graphs/graph_graph.sqlite")).unwrap();
    let t = report.timeline(&Request::default()).unwrap();
    let d = &t.devices[0];
    assert_eq!(d.busy.graph_executions, 12);
    assert_eq!(d.busy.busy_ns, 3_076_650);
    assert_eq!(d.busy.span_ns, 13_473_153);
    assert_eq!(d.busy.graph_busy_ns, 2_429_967);
    assert!(t.coverage.is_empty(), "{:?}", t.coverage);
}

/// Per graph: executions and GPU time per execution equal the GRAPH_TRACE rows; host time is the
/// `cudaGraphLaunch` calls' (correlation id join).
#[test]
fn graph_facts_in_graph_level_trace() {
    let report = Report::open(&fixture("h200/graphs/graph_graph.sqlite")).unwrap();
    let g = report.graphs(&Request::default()).unwrap();
    assert_eq!(g.trace_mode, "graph");
    assert_eq!((g.executions, g.unlinked_executions), (12, 0));
    assert_eq!(g.graphs.len(), 1);
    let f = &g.graphs[0];
    assert_eq!((f.graph_id, f.graph_exec_id), (Some(4), Some(5)));
    assert_eq!(f.exec_created_in_capture, Some(true));
    assert_eq!((f.launches, f.executions), (12, 12));
    assert_eq!(f.gpu_time.count, 12);
    assert_eq!(f.gpu_time.total_ns, 2_429_967);
    // Nearest-rank median and p90 of the 12 sorted execution times.
    assert_eq!(f.gpu_time.median_ns, Some(202_271));
    assert_eq!(f.gpu_time.p90_ns, Some(203_551));
    assert_eq!(f.gpu_time.max_ns, Some(203_966));
    assert!(f.kernels_per_execution.is_none());
    assert_eq!(f.host_time.median_ns, Some(24_469));
    assert_eq!(f.host_time.max_ns, Some(57_768));
    assert_eq!(f.launch_latency.median_ns, Some(26_118));
    let cov = report.coverage("kernels").unwrap();
    assert_eq!(cov.len(), 1);
    assert_eq!(cov[0].table, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE");
    assert_eq!(cov[0].rows, 12);
}

/// Node-level trace: the 52 kernels of each `cudaGraphLaunch` make one execution.
#[test]
fn graph_facts_in_node_level_trace() {
    let report = Report::open(&fixture("h200/graphs/graph_node.sqlite")).unwrap();
    let g = report.graphs(&Request::default()).unwrap();
    assert_eq!(g.trace_mode, "node");
    assert_eq!((g.executions, g.unlinked_executions), (12, 0));
    assert_eq!(g.graphs.len(), 1);
    let f = &g.graphs[0];
    assert_eq!((f.graph_id, f.graph_exec_id), (None, None));
    assert_eq!(f.first_node_id, Some(21_474_836_480));
    assert_eq!((f.launches, f.executions), (12, 12));
    assert_eq!(f.gpu_time.total_ns, 2_500_400);
    assert_eq!(f.gpu_time.median_ns, Some(208_062));
    assert_eq!(f.gpu_time.max_ns, Some(210_207));
    let k = f.kernels_per_execution.as_ref().unwrap();
    assert_eq!((k.min, k.max, k.total), (Some(52), Some(52), 624));
    assert_eq!(f.launch_latency.median_ns, Some(98_848));
    assert!(report.coverage("kernels").unwrap().is_empty());
}

/// Kernels of graph executions are not measured from the `cudaGraphLaunch` that started the whole
/// graph: ordinary launch latency covers the 148 kernels launched one by one, graph launches and
/// node gaps are reported apart.
#[test]
fn graph_kernels_have_their_own_launch_facts() {
    let report = Report::open(&fixture("h200/graphs/graph_node.sqlite")).unwrap();
    let t = report.timeline(&Request::default()).unwrap();
    let l = &t.launch[0];
    assert_eq!((l.kernels, l.graph_kernels), (148, 624));
    assert_eq!(l.launch_latency.count, 148);
    let g = &t.graph_launch[0];
    assert_eq!((g.executions, g.matched, g.node_kernels), (12, 12, 624));
    assert_eq!(g.launch_latency.median_ns, Some(98_848));
    // 51 gaps per execution of 52 kernels.
    assert_eq!(g.node_gap.count, 12 * 51);
    assert!(g.node_gap.median_ns.unwrap() < 10_000);
}

/// `timeline_and_graphs` (the summary's single read) gives exactly what `timeline` and `graphs` give
/// apart, on graph-level, node-level and ordinary captures, whole and in a window.
#[test]
fn one_read_gives_the_timeline_and_the_graph_facts() {
    for rel in [
        "h200/graphs/graph_graph.sqlite",
        "h200/graphs/graph_node.sqlite",
        "h200/nsys/eager.sqlite",
        "public/nsys/h100_2gpu_1s.sqlite",
    ] {
        let report = Report::open(&fixture(rel)).unwrap();
        let window = Request {
            window_start_ns: Some(0),
            window_end_ns: Some(7_230_000_000),
            ..Request::default()
        };
        for req in [Request::default(), window] {
            let (t, g) = report.timeline_and_graphs(&req).unwrap();
            let apart_t = serde_json::to_string(&report.timeline(&req).unwrap()).unwrap();
            let apart_g = serde_json::to_string(&report.graphs(&req).unwrap()).unwrap();
            assert_eq!(serde_json::to_string(&t).unwrap(), apart_t, "{rel}");
            assert_eq!(serde_json::to_string(&g).unwrap(), apart_g, "{rel}");
        }
    }
    let report = Report::open(&fixture("h200/graphs/graph_node.sqlite")).unwrap();
    let (t, g) = report.timeline_and_graphs(&Request::default()).unwrap();
    assert_eq!((g.trace_mode.as_str(), g.executions), ("node", 12));
    assert_eq!(t.graph_launch[0].node_kernels, 624);
}

/// Graph-level trace: each `decode_step` range launches one graph execution (its `cudaGraphLaunch`
/// lies inside the range on the same thread). The 12 executions, 2,429,967 ns (GRAPH_TRACE joined to
/// RUNTIME on correlationId, the call inside a `decode_step` range of its thread), are the range's GPU
/// time; it launched no kernel one by one.
#[test]
fn graph_executions_count_in_the_nvtx_range_that_launched_them() {
    let report = Report::open(&fixture("h200/graphs/graph_graph.sqlite")).unwrap();
    let t = report.nvtx(&Request::default(), false).unwrap();
    let at = texts(&t, "range")
        .iter()
        .position(|r| r == ":decode_step")
        .unwrap();
    let col = |c: &str| ints(&t, c)[at];
    assert_eq!(col("instances"), 12);
    assert_eq!(
        (
            col("kernels"),
            col("kernel_inclusive_ns"),
            col("kernel_exclusive_ns")
        ),
        (0, 0, 0)
    );
    assert_eq!(col("graph_executions"), 12);
    assert_eq!(col("graph_inclusive_ns"), 2_429_967);
    assert_eq!(col("graph_exclusive_ns"), 2_429_967);
    // The ranges table is ordered by kernel + graph time: decode_step (2.43 ms) before prefill.
    assert_eq!(at, 0);
    let per = report.nvtx(&Request::default(), true).unwrap();
    let decode: Vec<usize> = texts(&per, "range")
        .iter()
        .enumerate()
        .filter(|(_, r)| *r == ":decode_step")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(decode.len(), 12);
    let graphs = ints(&per, "graph_executions");
    let inclusive = ints(&per, "graph_inclusive_ns");
    assert!(decode.iter().all(|&i| graphs[i] == 1));
    assert_eq!(decode.iter().map(|&i| inclusive[i]).sum::<i64>(), 2_429_967);
    // Node-level trace: the graphs' kernels are kernels (624 = 12 x 52), no execution row exists.
    let node = Report::open(&fixture("h200/graphs/graph_node.sqlite")).unwrap();
    let t = node.nvtx(&Request::default(), false).unwrap();
    let at = texts(&t, "range")
        .iter()
        .position(|r| r == ":decode_step")
        .unwrap();
    assert_eq!(ints(&t, "kernels")[at], 624);
    assert_eq!(ints(&t, "graph_executions")[at], 0);
}

/// Host blocked time takes every synchronizing call, recorded by CUPTI or not: the 13
/// `cudaDeviceSynchronize` calls of the graph-level capture (1,546,206 ns) have no synchronization
/// row; the 12 `cudaStreamSynchronize` calls (73,118 ns) each have one.
#[test]
fn host_sync_takes_synchronizing_calls_without_a_sync_row() {
    let report = Report::open(&fixture("h200/graphs/graph_graph.sqlite")).unwrap();
    let t = report.timeline(&Request::default()).unwrap();
    let got: Vec<(&str, Option<i64>, u64, u64, i64)> = t
        .host_sync
        .iter()
        .map(|h| {
            (
                h.api_name.as_str(),
                h.device_id,
                h.calls,
                h.recorded_calls,
                h.blocked_ns,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("cudaDeviceSynchronize", Some(0), 13, 0, 1_546_206),
            ("cudaStreamSynchronize", Some(0), 12, 12, 73_118),
        ]
    );
    let context = t
        .synchronization
        .iter()
        .find(|s| s.sync_type == "Context sync")
        .unwrap();
    assert_eq!((context.api_name.as_deref(), context.count), (None, 1));
}

/// The trace mode comes from the capture option (cheap), and a node-level trace carries the note
/// on the launch call's inflated host time.
#[test]
fn trace_mode_and_the_node_level_note() {
    let graph = Report::open(&fixture("h200/graphs/graph_graph.sqlite")).unwrap();
    let node = Report::open(&fixture("h200/graphs/graph_node.sqlite")).unwrap();
    let eager = Report::open(&fixture("h200/nsys/eager.sqlite")).unwrap();
    assert_eq!(graph.graph_trace_mode().unwrap().as_deref(), Some("graph"));
    assert_eq!(node.graph_trace_mode().unwrap().as_deref(), Some("node"));
    assert_eq!(eager.graph_trace_mode().unwrap().as_deref(), Some("graph"));
    assert_eq!(
        node.info().unwrap().graph_trace_mode.as_deref(),
        Some("node")
    );
    let g = node.graphs(&Request::default()).unwrap();
    assert_eq!(g.notes, vec![super::graphs::NODE_LEVEL_NOTE.to_string()]);
    assert_eq!(g.graphs[0].host_time.median_ns, Some(94_874));
    assert!(graph.graphs(&Request::default()).unwrap().notes.is_empty());
}
