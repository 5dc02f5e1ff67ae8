//! Paths on the real fixtures; the numbers are hand counts checked against `tests/kineto_oracle.py`.

use super::*;
use crate::torch_trace::open;

fn fixture(rel: &str) -> std::path::PathBuf {
    crate::testdata::fixtures().join(rel)
}

/// The sums of the path whose text is `path`.
fn row(set: &TraceSet, path: &str) -> (Sums, u32) {
    let trace = &set.traces[0];
    let tree = tree::build(trace);
    let all = sums(trace, &tree);
    let node = (0..tree.nodes.len() as u32)
        .find(|&n| path_text(trace, &tree, n) == path)
        .unwrap_or_else(|| panic!("no path {path}"));
    (all[node as usize], tree.nodes[node as usize].depth)
}

#[test]
fn graph_replays_belong_to_the_launching_ops() {
    let set = open(&fixture("h200/graphs/graph_trace.json")).unwrap();
    let (region, depth) = row(&set, "Torch-Compiled Region: 0/0");
    assert_eq!(depth, 1);
    assert_eq!(region.instances, 6);
    assert_eq!(
        (region.cpu_inclusive, region.cpu_exclusive),
        (1_519_083, 244_906)
    );
    // Six cudaGraphLaunch calls, 52 kernels each.
    assert_eq!(region.graph_events_inclusive, 6 * 52);
    assert_eq!(region.graph_inclusive, 1_111_797);
    assert_eq!(region.gpu_events_inclusive, 330);
    assert_eq!(region.gpu_events_exclusive, 0);
    let call = "Torch-Compiled Region: 0/0 > ## Call CompiledFxGraph \
                fmp7c2klmqu5g754lbu2yhf5uc3wocbd6j7y6pzcwkaiqgsulvub ##";
    let (inner, depth) = row(&set, call);
    assert_eq!(depth, 2);
    assert_eq!(
        (inner.gpu_events_exclusive, inner.gpu_exclusive),
        (312, 1_111_797)
    );
    let table = kernels_table(&set).unwrap();
    assert!(table.num_rows() > 0);
}

#[test]
fn decode_linear_layers_launch_their_gemms() {
    let set = open(&fixture("gpuopt/h200/decode/decode_eager_trace.json.gz")).unwrap();
    let (mm, depth) = row(&set, "aten::linear > aten::matmul > aten::mm");
    assert_eq!(depth, 3);
    assert_eq!(mm.instances, 147);
    assert_eq!(
        (mm.gpu_events_exclusive, mm.gpu_exclusive),
        (171, 1_028_284)
    );
    let (linear, _) = row(&set, "aten::linear");
    assert_eq!(linear.gpu_inclusive, 1_028_284);
    assert_eq!(linear.gpu_exclusive, 0);
    assert_eq!(
        (linear.cpu_inclusive, linear.cpu_exclusive),
        (7_790_311, 479_350)
    );
}

#[test]
fn profiler_steps_are_see_through() {
    let set = open(&fixture("h200/torch/eager_trace.json")).unwrap();
    let trace = &set.traces[0];
    let tree = tree::build(trace);
    assert!(tree
        .nodes
        .iter()
        .all(|n| !trace.name(n.name).starts_with("ProfilerStep#")));
    let (step, depth) = row(&set, "step_0 > aten::linear > aten::matmul > aten::mm");
    assert_eq!(depth, 4);
    assert_eq!(
        (step.gpu_events_exclusive, step.gpu_exclusive),
        (12, 563_228)
    );
}
