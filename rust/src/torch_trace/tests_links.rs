//! The host nesting and the ops of runtime calls (`links`) against the way they were computed
//! before (a sort of every host range; a map of every op's External id), on random threads, spans
//! and file orders: the merge of sorted runs, its fallback to a sort, and the map of the ids calls
//! outside the ops name give the same links.

use super::*;
use crate::torch_trace::records::{
    CpuEvent, FlowPoint, GpuEvent, GpuKind, OwnedIdent, RuntimeEvent, Thread,
};
use proptest::prelude::*;

// The earlier code, kept as the oracle.

fn nest_by_sorting(ev: &Events, links: &mut Links) {
    let cpu = ev.cpu.iter().enumerate().map(|(i, c)| Host {
        thread: c.thread,
        start: c.start,
        end: c.end,
        order: match c.kind {
            CpuKind::Annotation => 0,
            CpuKind::Op => 1,
            CpuKind::Python => 2,
        },
        runtime: false,
        index: idx(i),
    });
    let runtime = ev.runtime.iter().enumerate().map(|(i, r)| Host {
        thread: r.thread,
        start: r.start,
        end: r.end,
        order: if r.driver { 4 } else { 3 },
        runtime: true,
        index: idx(i),
    });
    let hosts = sorted_by_thread(cpu.chain(runtime), ev.threads.len());
    // Each open range with where the union of its direct children so far ends.
    let mut stack: Vec<(Host, i64)> = Vec::new();
    let mut thread = NONE;
    for h in hosts {
        if h.thread != thread {
            stack.clear();
            thread = h.thread;
        }
        while let Some((top, _)) = stack.last() {
            if top.end >= h.end {
                break;
            }
            if top.end > h.start {
                links.stats.improper_nesting += 1;
            }
            stack.pop();
        }
        if let Some((parent, covered)) = stack.last_mut() {
            let parent = *parent;
            let from = h.start.max(*covered);
            if !parent.runtime && h.end > from {
                if let Some(s) = links.cpu_self_ns.get_mut(parent.index as usize) {
                    *s -= h.end - from;
                }
            }
            *covered = (*covered).max(h.end);
            // The enclosing CPU range: the parent itself, or (for a driver call inside a runtime
            // call) the runtime call's own enclosing range.
            let cpu_parent = if parent.runtime {
                links
                    .runtime_parent
                    .get(parent.index as usize)
                    .copied()
                    .unwrap_or(NONE)
            } else {
                parent.index
            };
            let slot = if h.runtime {
                links.runtime_parent.get_mut(h.index as usize)
            } else {
                links.cpu_parent.get_mut(h.index as usize)
            };
            if let Some(slot) = slot {
                *slot = cpu_parent;
            }
        }
        stack.push((h, h.start));
    }
}

/// The host ranges sorted by (thread, start, longest first, kind, index). Grouped by thread first
/// (a counting sort that keeps file order), then each thread's ranges sorted on their own: Kineto
/// writes each category in start order, so a thread's ranges are a few sorted runs, which the
/// stable sort merges in linear time (a general sort of all ranges was most of the link).
fn sorted_by_thread(hosts: impl Iterator<Item = Host> + Clone, threads: usize) -> Vec<Host> {
    // Bucket of a thread id (ids are below `threads`; anything else shares the last bucket).
    let bucket = |t: u32| (t as usize).min(threads);
    let mut starts = vec![0_usize; threads + 2];
    for h in hosts.clone() {
        if let Some(n) = starts.get_mut(bucket(h.thread) + 1) {
            *n += 1;
        }
    }
    for i in 1..starts.len() {
        let before = starts.get(i - 1).copied().unwrap_or(0);
        if let Some(n) = starts.get_mut(i) {
            *n += before;
        }
    }
    let total = starts.last().copied().unwrap_or(0);
    let mut out = vec![
        Host {
            thread: NONE,
            start: 0,
            end: 0,
            order: 0,
            runtime: false,
            index: NONE,
        };
        total
    ];
    for h in hosts {
        if let Some(next) = starts.get_mut(bucket(h.thread)) {
            if let Some(slot) = out.get_mut(*next) {
                *slot = h;
            }
            *next += 1;
        }
    }
    out.sort_by_key(|h| (h.thread, h.start, Reverse(h.end), h.order, h.index));
    out
}

fn ops_by_full_map(ev: &Events, links: &mut Links) {
    let mut by_external_id: Option<FastMap<i64, u32>> = None;
    for (r, call) in ev.runtime.iter().enumerate() {
        links.stats.runtime_calls += 1;
        let mut c = links.runtime_parent.get(r).copied().unwrap_or(NONE);
        while let Some(cpu) = ev.cpu.get(c as usize) {
            if cpu.kind == CpuKind::Op {
                break;
            }
            c = links.cpu_parent.get(c as usize).copied().unwrap_or(NONE);
        }
        let op = if let Some(cpu) = ev.cpu.get(c as usize) {
            links.stats.runtime_op_by_containment += 1;
            if call.external_id >= 0 {
                if cpu.external_id == call.external_id {
                    links.stats.external_id_agree += 1;
                } else {
                    links.stats.external_id_disagree += 1;
                }
            }
            c
        } else {
            let map = by_external_id.get_or_insert_with(|| {
                let mut map = FastMap::default();
                for (i, cpu) in ev.cpu.iter().enumerate() {
                    if cpu.kind == CpuKind::Op && cpu.external_id >= 0 {
                        map.entry(cpu.external_id).or_insert(idx(i));
                    }
                }
                map
            });
            match map.get(&call.external_id) {
                Some(&op) if call.external_id >= 0 => {
                    links.stats.runtime_op_by_external_id += 1;
                    op
                }
                _ => {
                    links.stats.runtime_without_op += 1;
                    NONE
                }
            }
        };
        if let Some(slot) = links.runtime_op.get_mut(r) {
            *slot = op;
        }
    }
}

fn links_of(ev: &Events) -> Links {
    Links {
        runtime_parent: vec![NONE; ev.runtime.len()],
        runtime_op: vec![NONE; ev.runtime.len()],
        cpu_parent: vec![NONE; ev.cpu.len()],
        cpu_self_ns: ev.cpu.iter().map(|c| c.end - c.start).collect(),
        ..Links::default()
    }
}

fn compared(l: &Links) -> String {
    format!(
        "{:?} {:?} {:?} {:?} {:?}",
        l.runtime_parent, l.runtime_op, l.cpu_parent, l.cpu_self_ns, l.stats
    )
}

/// One host range: (thread, start, duration, kind or driver, External id).
type Range = (u32, i64, i64, u8, i64);

fn events(threads: u32, cpu: &[Range], runtime: &[Range]) -> Events {
    let mut ev = Events::default();
    ev.threads = (0..threads)
        .map(|t| Thread {
            pid: OwnedIdent::Int(1),
            tid: OwnedIdent::Int(i64::from(t)),
        })
        .collect();
    ev.cpu = cpu
        .iter()
        .map(|&(thread, start, dur, kind, external_id)| CpuEvent {
            name: 0,
            thread,
            kind: [CpuKind::Annotation, CpuKind::Op, CpuKind::Python][usize::from(kind % 3)],
            start,
            end: start + dur,
            external_id,
            comm: NONE,
            shapes: NONE,
        })
        .collect();
    ev.runtime = runtime
        .iter()
        .map(|&(thread, start, dur, driver, external_id)| RuntimeEvent {
            name: 0,
            thread,
            driver: driver % 2 == 1,
            start,
            end: start + dur,
            correlation: -1,
            external_id,
        })
        .collect();
    ev
}

fn same_links(ev: &Events) {
    let (mut new, mut old) = (links_of(ev), links_of(ev));
    nest(ev, &mut new);
    ops_of_runtime(ev, &mut new);
    nest_by_sorting(ev, &mut old);
    ops_by_full_map(ev, &mut old);
    assert_eq!(compared(&new), compared(&old));
}

fn range(threads: u32) -> impl Strategy<Value = Range> {
    (0..threads, 0_i64..60, 0_i64..25, 0_u8..3, -1_i64..6)
}

proptest! {
    #[test]
    fn nesting_and_ops_agree_with_the_sort_of_every_range(
        (threads, cpu, runtime) in (1_u32..4).prop_flat_map(|t| (
            Just(t),
            prop::collection::vec(range(t), 0..60),
            prop::collection::vec(range(t), 0..30),
        )),
        sorted in any::<bool>(),
    ) {
        let (mut cpu, mut runtime) = (cpu, runtime);
        if sorted {
            // Kineto's way: each kind in start order (a few runs per thread, merged).
            cpu.sort_by_key(|r| r.1);
            runtime.sort_by_key(|r| r.1);
        }
        same_links(&events(threads, &cpu, &runtime));
    }
}

#[test]
fn a_thread_of_many_runs_is_sorted_and_nests_the_same() {
    // Descending starts: one run per range, past the merge's limit.
    let cpu: Vec<Range> = (0..40).map(|i| (0, 100 - i, 1 + i % 3, 1, i)).collect();
    let runtime: Vec<Range> = (0..40).map(|i| (0, 100 - i, 0, 0, i)).collect();
    same_links(&events(1, &cpu, &runtime));
}

/// A call or GPU event for the flow check: (correlation, start).
type Point = (i64, i64);

proptest! {
    #[test]
    fn flows_counted_through_the_links_as_by_the_set_of_every_event(
        calls in prop::collection::vec((-1_i64..6, 0_i64..8), 0..12),
        gpus in prop::collection::vec((-1_i64..8, 0_i64..8), 0..12),
        flows in prop::collection::vec((-1_i64..8, 0_i64..8), 0..20),
    ) {
        let mut ev = events(1, &[], &[]);
        ev.runtime = calls.iter().map(|&(correlation, start): &Point| RuntimeEvent {
            name: 0, thread: 0, driver: false, start, end: start + 1, correlation, external_id: -1,
        }).collect();
        ev.gpu = gpus.iter().map(|&(correlation, start): &Point| GpuEvent {
            name: 0, kind: GpuKind::Kernel, device: 0, stream: 7, start, end: start + 1,
            correlation, external_id: -1, bytes: -1, config: NONE, comm: NONE,
        }).collect();
        ev.flows = flows.iter().map(|&(id, ts): &Point| FlowPoint { id, ts, start: true }).collect();
        let links = link(&ev);
        prop_assert_eq!(
            (links.stats.flow_points, links.stats.flow_points_matching),
            check_flows(&ev)
        );
    }
}

#[test]
fn overlapping_children_are_taken_from_self_time_once() {
    // A trial's crossing `ProfilerStep#` ranges made a path's exclusive CPU time negative: two
    // children overlapping each other were each subtracted whole. Parent [0, 100) with children
    // [10, 50) and [30, 90) (and [95, 99)): self = 100 - |[10, 90) ∪ [95, 99)| = 16.
    let cpu: Vec<Range> = vec![
        (0, 0, 100, 0, -1),
        (0, 10, 40, 0, -1),
        (0, 30, 60, 0, -1),
        (0, 95, 4, 0, -1),
    ];
    let ev = events(1, &cpu, &[]);
    let mut links = links_of(&ev);
    nest(&ev, &mut links);
    assert_eq!(links.cpu_self_ns.first(), Some(&16));
    assert_eq!(links.stats.improper_nesting, 1);
    same_links(&ev);
}

proptest! {
    #[test]
    fn self_time_is_never_negative(cpu in prop::collection::vec(range(2), 0..60)) {
        let ev = events(2, &cpu, &[]);
        let mut links = links_of(&ev);
        nest(&ev, &mut links);
        prop_assert!(links.cpu_self_ns.iter().all(|s| *s >= 0), "{:?}", links.cpu_self_ns);
    }
}
