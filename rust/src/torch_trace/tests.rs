//! Engine tests on the real fixtures (`tests/data/fixtures`) and on small hand-built traces.

use super::*;
use std::path::PathBuf;

fn fixture(rel: &str) -> PathBuf {
    crate::testdata::fixtures().join(rel)
}

#[test]
fn h200_trace_counts_and_links() {
    let set = open(&fixture("h200/torch/eager_trace.json")).unwrap();
    let t = &set.traces[0];
    assert_eq!(t.platform, Platform::Cuda);
    assert_eq!(t.rank, 0);
    assert_eq!(t.rank_source, "single_trace");
    let c = &t.events.counts;
    assert_eq!(
        (c.events, c.complete, c.cpu_ops, c.annotations),
        (975, 703, 483, 3)
    );
    assert_eq!(
        (
            c.runtime_calls,
            c.driver_calls,
            c.kernels,
            c.memcpys,
            c.memsets
        ),
        (89, 30, 66, 6, 21)
    );
    let l = &t.links.stats;
    assert_eq!(l.gpu_events, 93);
    assert_eq!(
        l.gpu_unlinked, 0,
        "every GPU event in the H200 trace has a runtime caller"
    );
    eprintln!("{l:?}");
}
