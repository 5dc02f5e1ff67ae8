//! Launch facts (API time, queue delay, launch latency per device) and the calls graph executions
//! and synchronizations need, from one join of the operations and synchronizations to their calls
//! that keeps, per kernel, only the four numbers the distributions are made of (never a call per
//! operation).

use super::api::strip_version;
use super::describe::Durations;
use super::distribution::Distribution;
use super::graphs::is_graph_launch;
use super::hash::IdMap;
use super::ops::{self, Call, Op, OpKind};
use super::schema::Schema;
use super::select::{Selection, PID_MASK};
use super::slim::{Slim, Slims};
use super::strings::Strings;
use super::sync::sync_api_flags;
use crate::error::Result;
use crate::intervals::Span;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize)]
pub struct Launch {
    pub device_id: i64,
    /// Kernels launched one by one (kernels of graph executions are in `graph_launch`).
    pub kernels: u64,
    /// Kernels of graph executions (node-level traces), left out of the distributions below.
    pub graph_kernels: u64,
    /// Kernels whose launch call is in the export (joined on correlationId and process).
    pub matched: u64,
    /// Duration of the matched kernels (end − start): what each launch call bought on the GPU.
    pub kernel_time: Distribution,
    pub api_time: Distribution,
    pub api_time_excl_overhead: Distribution,
    /// Kernel start − launch call end; negative when the kernel started before the call returned.
    pub queue_delay: Distribution,
    pub negative_queue_delays: u64,
    /// Kernel start − launch call start.
    pub launch_latency: Distribution,
}

/// Per device: kernels whose call launched a whole graph, and the four measures of the others.
/// (`Durations`: 4 bytes a value where it fits, and merging moves chunks: the measures of millions of
/// kernels are held once, not once per worker and again merged.)
#[derive(Default)]
struct DeviceAcc {
    graph_called: u64,
    kernel: Durations,
    api: Durations,
    api_excl: Durations,
    queue: Durations,
    negative_queue: u64,
    latency: Durations,
}

impl DeviceAcc {
    fn append(&mut self, other: Self) {
        self.graph_called += other.graph_called;
        self.negative_queue += other.negative_queue;
        self.kernel.append(other.kernel);
        self.api.append(other.api);
        self.api_excl.append(other.api_excl);
        self.queue.append(other.queue);
        self.latency.append(other.latency);
    }
}

/// One join worker's findings.
#[derive(Default)]
struct Acc {
    devices: BTreeMap<i64, DeviceAcc>,
    /// Operations that belong to graph executions, with their calls (by operation index).
    graph_ops: Vec<(usize, Call)>,
    /// Synchronizations' calls (by synchronization index).
    syncs: Vec<(usize, Call)>,
    /// Selected calls of synchronizing APIs: (process, correlationId, call).
    sync_apis: Vec<(i64, i64, Call)>,
    /// Whether an API name id launches a whole graph (each name checked once).
    launches: IdMap<u32, bool>,
}

/// What the timeline needs of the operations' and synchronizations' calls.
pub struct Joined {
    pub launch: Vec<Launch>,
    /// The operations of graph executions (whole, in start order) and their calls.
    pub graph_ops: Vec<Op>,
    pub graph_calls: Vec<Option<Call>>,
    /// `sync_calls[i]` made synchronization `i`.
    pub sync_calls: Vec<Option<Call>>,
    /// The selected calls of synchronizing APIs ([`super::sync::SYNC_APIS`]): (process,
    /// correlationId, call), whether or not a synchronization row names them.
    pub sync_api_calls: Vec<(i64, i64, Call)>,
}

/// Joins `slims` and the synchronizations (`syncs`: (globalPid, correlationId)) to their calls, and
/// collects the calls of synchronizing APIs the selection keeps, in the same pass over the calls.
/// `within(thread, span)`: profiler overhead inside a call, left out of `api_time_excl_overhead`.
pub fn join<W>(
    schema: &Schema,
    strings: &Strings,
    sel: &Selection,
    slims: &Slims,
    syncs: &[(i64, i64)],
    within: W,
) -> Result<Joined>
where
    W: Fn(i64, Span) -> i64 + Sync,
{
    let n = slims.ops.len();
    let key_of = |i: usize| -> (i64, i64) {
        match slims.ops.get(i) {
            Some(op) => (slims.lane(op).global_pid, op.correlation),
            None => syncs.get(i - n).copied().unwrap_or_default(),
        }
    };
    let sync_names = sync_api_flags(strings);
    let parts = ops::join_each_named(
        schema,
        strings,
        n + syncs.len(),
        key_of,
        Acc::default,
        |acc: &mut Acc, i, call| {
            let Some(op) = slims.ops.get(i) else {
                acc.syncs.push((i - n, call));
                return Ok(());
            };
            let graph_call = *acc
                .launches
                .entry(call.name)
                .or_insert_with(|| is_graph_launch(strip_version(strings.value(call.name))));
            if Slims::in_graph(op) || graph_call {
                acc.graph_ops.push((i, call));
            }
            if op.kind != OpKind::Kernel {
                return Ok(());
            }
            let dev = acc.devices.entry(slims.lane(op).device).or_default();
            // A graph's kernels start when the graph reaches them, not when a call launched them:
            // the graph launch call is not theirs to be measured from.
            if op.graph >= 0 {
                return Ok(());
            }
            if graph_call {
                dev.graph_called += 1;
                return Ok(());
            }
            let api = call.end - call.start;
            dev.kernel.push(op.end - op.start);
            dev.api.push(api);
            dev.api_excl
                .push(api - within(call.global_tid, Span::new(call.start, call.end)));
            let queue = op.start - call.end;
            dev.negative_queue += u64::from(queue < 0);
            dev.queue.push(queue);
            dev.latency.push(op.start - call.start);
            Ok(())
        },
        &sync_names,
        |acc: &mut Acc, correlation, call| {
            if sel.keep_cpu(call.start, call.end, call.global_tid) {
                acc.sync_apis
                    .push((call.global_tid & PID_MASK, correlation, call));
            }
            Ok(())
        },
    )?;
    let mut devices: BTreeMap<i64, DeviceAcc> = BTreeMap::new();
    let (mut graph_hits, mut sync_calls) = (Vec::new(), vec![None; syncs.len()]);
    let mut sync_api_calls = Vec::new();
    for part in parts {
        sync_api_calls.extend(part.sync_apis);
        for (device, acc) in part.devices {
            devices.entry(device).or_default().append(acc);
        }
        graph_hits.extend(part.graph_ops);
        for (i, call) in part.syncs {
            if let Some(cell) = sync_calls.get_mut(i) {
                *cell = Some(call);
            }
        }
    }
    let launch = launch_facts(slims, devices)?;
    let (graph_ops, graph_calls) = graph_members(slims, graph_hits);
    Ok(Joined {
        launch,
        graph_ops,
        graph_calls,
        sync_calls,
        sync_api_calls,
    })
}

/// Launch facts per device with kernels: counts from every kernel, measures from the joined ones.
fn launch_facts(slims: &Slims, mut joined: BTreeMap<i64, DeviceAcc>) -> Result<Vec<Launch>> {
    // (kernels launched one by one, kernels of graph nodes) per device, before the calls are known.
    let mut counts: BTreeMap<i64, (u64, u64)> = BTreeMap::new();
    for op in slims.ops.iter().filter(|o| o.kind == OpKind::Kernel) {
        let c = counts.entry(slims.lane(op).device).or_default();
        if op.graph >= 0 {
            c.1 += 1;
        } else {
            c.0 += 1;
        }
    }
    counts
        .into_iter()
        .map(|(device, (kernels, nodes))| {
            let a = joined.remove(&device).unwrap_or_default();
            Ok(Launch {
                device_id: device,
                kernels: kernels - a.graph_called,
                graph_kernels: nodes + a.graph_called,
                matched: u64::try_from(a.api.len()).unwrap_or(u64::MAX),
                negative_queue_delays: a.negative_queue,
                kernel_time: Distribution::of_durations(a.kernel)?,
                api_time: Distribution::of_durations(a.api)?,
                api_time_excl_overhead: Distribution::of_durations(a.api_excl)?,
                queue_delay: Distribution::of_durations(a.queue)?,
                launch_latency: Distribution::of_durations(a.latency)?,
            })
        })
        .collect()
}

/// The operations graph executions are made of, in start order, with their calls: every graph
/// execution and graph node (called or not), and every operation a graph launch call launched.
fn graph_members(slims: &Slims, mut hits: Vec<(usize, Call)>) -> (Vec<Op>, Vec<Option<Call>>) {
    hits.sort_unstable_by_key(|h| h.0);
    let mut hits = hits.into_iter().peekable();
    let (mut members, mut calls) = (Vec::new(), Vec::new());
    let mut take = |op: &Slim, call: Option<Call>| {
        members.push(slims.op(op));
        calls.push(call);
    };
    for (i, op) in slims.ops.iter().enumerate() {
        let call = hits.next_if(|h| h.0 == i).map(|h| h.1);
        if call.is_some() || Slims::in_graph(op) {
            take(op, call);
        }
    }
    (members, calls)
}
