//! The analyses on small hand-built records: every number below is worked out by hand.

use super::activity::{Activity, Builder, CallKind, GpuOp, HostCall, Lane, Marker, OpClass, NONE};
use super::critical::{self, Category, Edge, Node};
use super::iterations::{self, Source};
use super::queue;
use crate::error::Result;

/// One launched operation: (name, class, stream, start, end, call start, call end); a call start
/// below 0 means "no call".
type Launched<'a> = (&'a str, OpClass, i64, i64, i64, i64, i64);

fn build(
    ops: &[Launched<'_>],
    syncs: &[(i64, i64)],
    ranges: &[(&str, i64, i64)],
) -> Result<Activity> {
    let mut b = Builder::new("nvtx");
    let p = b.process("1")?;
    let t = b.thread(p, "1/1")?;
    for &(name, class, stream, start, end, cs, ce) in ops {
        let lane = b.lane(Lane {
            device: 0,
            stream,
            process: p,
        })?;
        let call = if cs >= 0 {
            let n = b.name("cudaLaunchKernel")?;
            b.call(HostCall {
                start: cs,
                end: ce,
                thread: t,
                name: n,
                kind: CallKind::Launch,
            })?
        } else {
            NONE
        };
        let name = b.name(name)?;
        b.op(GpuOp {
            start,
            end,
            lane,
            name,
            call,
            class,
        })?;
    }
    for &(start, end) in syncs {
        let n = b.name("cudaDeviceSynchronize")?;
        b.call(HostCall {
            start,
            end,
            thread: t,
            name: n,
            kind: CallKind::Sync,
        })?;
    }
    for &(name, start, end) in ranges {
        let name = b.name(name)?;
        b.range(Marker {
            name,
            start,
            end,
            thread: t,
        });
    }
    Ok(b.finish())
}

const K: OpClass = OpClass::Kernel;

/// c1 [0,10) launches k1 [15,40); c2 [20,25) launches k2 [45,60); cudaDeviceSynchronize [30,70).
fn two_kernels() -> Result<Activity> {
    build(
        &[("k1", K, 7, 15, 40, 0, 10), ("k2", K, 7, 45, 60, 20, 25)],
        &[(30, 70)],
        &[("step_1", 0, 28)],
    )
}

#[test]
fn critical_path_by_hand() -> Result<()> {
    let a = two_kernels()?;
    let it = iterations::iterations(&a, Some("step_1"))?;
    let rows: Vec<&iterations::Row> = it
        .rows
        .iter()
        .filter(|r| r.source == Source::Marker)
        .collect();
    assert_eq!(rows.len(), 1);
    let paths = critical::paths(&a, &rows, critical::Keep::All);
    let [path] = paths.as_slice() else {
        panic!("one path: {paths:?}");
    };
    // The sync call ends last (70); it waited for k2 (ended 60), which followed k1 on its stream
    // (k1 ended 40 > k2's call ended 25); k1 followed its launch call c1 (ended 10, k1 started 15).
    let got: Vec<(i64, i64, &str, &str)> = path
        .segments
        .iter()
        .map(|s| (s.start, s.end, s.category.as_str(), s.edge.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 10, "launch", "start"),
            (10, 15, "idle", "launch"),
            (15, 40, "gpu_compute", "launch"),
            (40, 45, "idle", "stream_order"),
            (45, 60, "gpu_compute", "stream_order"),
            (60, 70, "sync", "sync_wait"),
        ]
    );
    assert_eq!((path.start, path.end), (0, 70));
    let by: Vec<i64> = Category::ALL.iter().map(|&c| path.total(c)).collect();
    // cpu, launch, compute, memory, sync, idle
    assert_eq!(by, vec![0, 10, 40, 0, 10, 10]);
    assert!(matches!(
        path.segments.last().map(|s| s.node),
        Some(Node::Call(_))
    ));
    assert_eq!(path.segments.first().map(|s| s.edge), Some(Edge::Start));
    Ok(())
}

#[test]
fn host_time_between_calls_is_cpu() -> Result<()> {
    // c1 [0,10) -> k1 [12,14); c2 [30,40) -> k2 [41,50): k2 waits for its launch (40 > k1's 14),
    // c2 follows c1 on the thread after 20 ns of host work.
    let a = build(
        &[("k1", K, 7, 12, 14, 0, 10), ("k2", K, 7, 41, 50, 30, 40)],
        &[],
        &[("s_1", 0, 45)],
    )?;
    let it = iterations::iterations(&a, Some("s_1"))?;
    let rows: Vec<&iterations::Row> = it
        .rows
        .iter()
        .filter(|r| r.source == Source::Marker)
        .collect();
    let paths = critical::paths(&a, &rows, critical::Keep::All);
    let got: Vec<(i64, i64, &str, &str)> = paths
        .iter()
        .flat_map(|p| p.segments.iter())
        .map(|s| (s.start, s.end, s.category.as_str(), s.edge.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 10, "launch", "start"),
            (10, 30, "cpu", "host_order"),
            (30, 40, "launch", "host_order"),
            (40, 41, "idle", "launch"),
            (41, 50, "gpu_compute", "launch"),
        ]
    );
    Ok(())
}

#[test]
fn queue_by_hand() -> Result<()> {
    // two_kernels plus c4 [80,90) launching k3 [95,100).
    let a = build(
        &[
            ("k1", K, 7, 15, 40, 0, 10),
            ("k2", K, 7, 45, 60, 20, 25),
            ("k3", K, 7, 95, 100, 80, 90),
        ],
        &[(30, 70)],
        &[],
    )?;
    let (q, levels) = queue::queues(&a, true);
    // Window [15, 100): busy [15,40) [45,60) [95,100) = 45; queued (launched, not running)
    // [40,45) [80,95) = 20; launch-bound (nothing outstanding) [60,80) = 20. Depth: 1 on [15,20),
    // 2 on [20,40), 1 on [40,60), 0 on [60,80), 1 on [80,100): mean 85 / 85 = 1.
    // The sync [30,70) waited for k2 (last to end before 70): 40 ns inside the window.
    let [stream, device] = q.as_slice() else {
        panic!("a stream row and a device row: {q:?}");
    };
    for row in [stream, device] {
        assert_eq!(
            (
                row.busy,
                row.queued_idle,
                row.launch_bound_idle,
                row.host_sync,
                row.max_depth
            ),
            (45, 20, 20, 40, 2)
        );
        assert!((row.mean_depth - 1.0).abs() < 1e-12);
        assert_eq!(
            (row.window.start, row.window.end, row.operations),
            (15, 100, 3)
        );
    }
    assert_eq!((stream.stream, device.stream), (Some(7), None));
    let stream_levels: Vec<(i64, i64, i64, i64)> = levels
        .iter()
        .filter(|l| l.stream.is_some())
        .map(|l| (l.start, l.end, l.depth, l.running))
        .collect();
    assert_eq!(
        stream_levels,
        vec![
            (15, 20, 1, 1),
            (20, 40, 2, 1),
            (40, 45, 1, 0),
            (45, 60, 1, 1),
            (60, 80, 0, 0),
            (80, 95, 1, 0),
            (95, 100, 1, 1),
        ]
    );
    Ok(())
}

/// A prefix P Q, then four units A B C; each op launched by its own call, with a 50 ns host pause
/// before every A and 5 ns elsewhere; the GPU runs each op 10 ns after its call ends.
fn looped(units: usize, with_ranges: bool) -> Result<Activity> {
    let mut ops: Vec<(String, i64, i64, i64, i64)> = Vec::new();
    let mut t = 0i64;
    let launch =
        |name: &str, pause: i64, t: &mut i64, ops: &mut Vec<(String, i64, i64, i64, i64)>| {
            *t += pause;
            let (cs, ce) = (*t, *t + 3);
            ops.push((name.to_string(), ce + 10, ce + 14, cs, ce));
            *t = ce;
        };
    launch("P", 0, &mut t, &mut ops);
    launch("Q", 5, &mut t, &mut ops);
    let mut ranges = Vec::new();
    for _ in 0..units {
        let range_start = t + 20;
        for (k, name) in ["A", "B", "C"].iter().enumerate() {
            launch(name, if k == 0 { 50 } else { 5 }, &mut t, &mut ops);
        }
        ranges.push(("step", range_start, t + 1));
    }
    let launched: Vec<Launched<'_>> = ops
        .iter()
        .map(|(n, s, e, cs, ce)| (n.as_str(), K, 7, *s, *e, *cs, *ce))
        .collect();
    build(&launched, &[], if with_ranges { &ranges } else { &[] })
}

#[test]
fn detection_finds_the_loop_after_its_prefix() -> Result<()> {
    let a = looped(4, false)?;
    let it = iterations::iterations(&a, None)?;
    assert_eq!(it.used, Source::Detected);
    let rows: Vec<(Option<usize>, usize, Option<&str>)> = it
        .rows
        .iter()
        .map(|r| (r.iteration, r.ops.len(), r.odd))
        .collect();
    assert_eq!(
        rows,
        vec![
            (None, 2, Some("before_first_repeat")),
            (Some(1), 3, None),
            (Some(2), 3, None),
            (Some(3), 3, None),
            (Some(4), 3, None),
        ]
    );
    let d = it
        .detection
        .first()
        .map(|d| (d.period_ops, d.phase, d.phase_pause_ns));
    assert_eq!(d, Some((Some(3), Some(0), Some(50))));
    // Each unit takes 50 + 3 + 5 + 3 + 5 + 3 = 69 ns of launching: completions 69 ns apart.
    let spans: Vec<Option<i64>> = it.rows.iter().map(|r| r.m.span).collect();
    // Q ends at 3+5+3+10+4 = 25 - 0? P: call [0,3), runs [13,17); Q: call [8,11), runs [21,25).
    assert_eq!(
        spans,
        vec![Some(25 - 13), Some(69), Some(69), Some(69), Some(69)]
    );
    Ok(())
}

#[test]
fn detected_and_marked_iterations_agree() -> Result<()> {
    let a = looped(4, true)?;
    let it = iterations::iterations(&a, None)?;
    assert_eq!(it.used, Source::Marker);
    let [agreement] = it.agreement.as_slice() else {
        panic!("one device: {:?}", it.agreement);
    };
    assert_eq!(
        (
            agreement.marker_iterations,
            agreement.detected_iterations,
            agreement.paired_rows
        ),
        (4, 4, 5)
    );
    assert_eq!(agreement.max_span_diff_pct, Some(0.0));
    assert_eq!(agreement.kernel_count_differs, 0);
    Ok(())
}

/// [`looped`] (no ranges) with op `index` ending `late_ns` later.
fn looped_with_late_op(units: usize, index: usize, late_ns: i64) -> Result<Activity> {
    let mut a = looped(units, false)?;
    if let Some(op) = a.ops.get_mut(index) {
        op.end += late_ns;
    }
    Ok(a)
}

#[test]
fn a_slow_iteration_is_a_straggler() -> Result<()> {
    // Delay the fourth iteration's last op by 100 ns (ops 2 + 3*3 + 2 = index 13).
    let it = iterations::iterations(&looped_with_late_op(6, 13, 100)?, None)?;
    let odd: Vec<(Option<usize>, Option<&str>)> =
        it.rows.iter().map(|r| (r.iteration, r.odd)).collect();
    assert_eq!(odd.get(4), Some(&(Some(4), Some("straggler"))));
    assert_eq!(
        odd.iter().filter(|(_, o)| *o == Some("straggler")).count(),
        1
    );
    Ok(())
}

#[test]
fn a_row_that_ends_before_an_earlier_one_spans_nothing() -> Result<()> {
    // A trial's overlapping kernels gave a row ending before the row before it a negative span
    // (completion to completion, from that earlier end). The second iteration's last op now runs
    // 10 us long: the rows after it end before it, span 0, and the spans still sum to the whole.
    let it = iterations::iterations(&looped_with_late_op(5, 7, 10_000)?, None)?;
    let spans: Vec<i64> = it.rows.iter().filter_map(|r| r.m.span).collect();
    assert!(spans.iter().all(|s| *s >= 0), "{spans:?}");
    assert!(spans.contains(&0), "{spans:?}");
    let first = it.rows.iter().filter_map(|r| r.m.start).min();
    let last = it.rows.iter().filter_map(|r| r.m.end).max();
    assert_eq!(
        Some(spans.iter().sum::<i64>()),
        last.zip(first).map(|(l, f)| l - f)
    );
    Ok(())
}

#[test]
fn a_path_keeps_only_the_stretches_asked_for() -> Result<()> {
    // Detected rows of a loop: every path has several stretches. Keeping the first n in table order
    // (or one row's) gives exactly those of the full walk, and every path's sums stay whole.
    let a = looped(6, false)?;
    let it = iterations::iterations(&a, None)?;
    let rows: Vec<&iterations::Row> = it.used_rows().collect();
    let all = critical::paths(&a, &rows, critical::Keep::All);
    let flat: Vec<(usize, critical::Segment)> = all
        .iter()
        .flat_map(|p| p.segments.iter().map(move |s| (p.row, *s)))
        .collect();
    assert!(all.len() >= 5 && flat.len() > 3 * all.len(), "{all:?}");
    for p in &all {
        assert_eq!(p.count, p.segments.len());
        let by_category: i64 = Category::ALL.iter().map(|&c| p.total(c)).sum();
        assert_eq!(by_category, p.end - p.start, "the stretches tile the path");
        let ops = p.segments.iter().filter(|s| matches!(s.node, Node::Op(_)));
        assert_eq!(p.ops, ops.count());
    }
    let summed = |paths: &[critical::Path]| -> Vec<(usize, [i64; 6], usize, usize, usize)> {
        paths
            .iter()
            .map(|p| (p.row, p.totals, p.ops, p.calls, p.count))
            .collect()
    };
    for n in 0..=flat.len() + 1 {
        let head = critical::paths(&a, &rows, critical::Keep::Head(n));
        let got: Vec<(usize, critical::Segment)> = head
            .iter()
            .flat_map(|p| p.segments.iter().map(move |s| (p.row, *s)))
            .collect();
        assert_eq!(
            got.as_slice(),
            flat.get(..n.min(flat.len())).unwrap_or_default()
        );
        assert_eq!(summed(&head), summed(&all));
    }
    let third = rows.get(2).map(|r| r.index);
    let one = critical::paths(&a, &rows, critical::Keep::Row(third.unwrap_or(usize::MAX)));
    let kept: Vec<usize> = one
        .iter()
        .filter(|p| !p.segments.is_empty())
        .map(|p| p.row)
        .collect();
    assert_eq!(kept, vec![2]);
    let full = all.get(2).map(|p| p.segments.clone());
    assert_eq!(one.get(2).map(|p| p.segments.clone()), full);
    assert_eq!(summed(&one), summed(&all));
    Ok(())
}
