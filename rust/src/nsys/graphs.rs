//! CUDA graphs: graph executions joined to the `cudaGraphLaunch`/`cuGraphLaunch` call that started
//! them, and facts per graph.
//!
//! Two trace modes record them differently. A graph-level trace (`--cuda-graph-trace=graph`, nsys'
//! default) has one `CUPTI_ACTIVITY_KIND_GRAPH_TRACE` row per execution, with `graphId` and
//! `graphExecId`, and no row for the kernels inside. A node-level trace (`node`) lists every kernel
//! (memcpy, memset) of the graph with its `graphNodeId` and the launch call's correlation id: the
//! operations of one launch call make one execution, and the graph is known by the smallest node id
//! of its executions (the export names no graph id for them).

use super::api::strip_version;
use super::db;
use super::distribution::{CountDistribution, Distribution};
use super::hash::{IdMap, IdSet};
use super::ops::{self, Call, Op, OpKind};
use super::schema::{Schema, GRAPH_EVENTS};
use super::select::{Selection, PID_MASK};
use super::strings::Strings;
use crate::error::Result;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Whether an API name (version suffix stripped) launches a whole CUDA graph.
pub fn is_graph_launch(api: &str) -> bool {
    api.starts_with("cudaGraphLaunch") || api.starts_with("cuGraphLaunch")
}

/// The API name ids among `calls` that launch a whole graph (each distinct name checked once).
pub fn graph_launch_names(strings: &Strings, calls: &[Option<Call>]) -> IdSet<u32> {
    let mut seen: IdMap<u32, bool> = IdMap::default();
    for c in calls.iter().flatten() {
        seen.entry(c.name)
            .or_insert_with(|| is_graph_launch(strip_version(strings.value(c.name))));
    }
    seen.into_iter()
        .filter(|&(_, g)| g)
        .map(|(n, _)| n)
        .collect()
}

/// One execution of a graph.
#[derive(Debug, Clone)]
pub struct Execution {
    pub device: i64,
    pub stream: i64,
    pub graph_id: Option<i64>,
    pub graph_exec_id: Option<i64>,
    /// Node-level traces: the smallest `graphNodeId` among its operations.
    pub first_node_id: Option<i64>,
    pub start: i64,
    pub end: i64,
    /// Node-level traces: the kernels it ran, in start order (start, end).
    pub kernels: Option<Vec<(i64, i64)>>,
    pub call: Option<Call>,
    pub global_pid: i64,
    pub correlation: i64,
}

/// Every graph execution of the selection, in start order, and the trace mode that recorded them.
pub struct Executions {
    pub mode: &'static str,
    pub list: Vec<Execution>,
}

/// Graph executions from the operations already loaded (`ops` sorted by start) and their calls
/// (`calls[i]` launched `ops[i]`). `ops` must hold the `Graph` operations (graph-level) and the
/// kernels, memcpys and memsets (node-level) of the selection.
pub fn executions(strings: &Strings, ops: &[Op], calls: &[Option<Call>]) -> Executions {
    let launches = graph_launch_names(strings, calls);
    let graph_call = |c: &Option<Call>| c.is_some_and(|c| launches.contains(&c.name));
    let mut list = Vec::new();
    let mut by_launch: IdMap<(i64, i64), usize> = IdMap::default();
    let (mut graph_rows, mut node_rows) = (false, false);
    for (op, call) in ops.iter().zip(calls) {
        if op.kind == OpKind::Graph {
            graph_rows = true;
            list.push(Execution {
                device: op.device,
                stream: op.stream,
                graph_id: Some(op.name),
                graph_exec_id: Some(op.graph),
                first_node_id: None,
                start: op.start,
                end: op.end,
                kernels: None,
                call: *call,
                global_pid: op.global_pid,
                correlation: op.correlation,
            });
            continue;
        }
        if op.graph < 0 && !graph_call(call) {
            continue;
        }
        node_rows = true;
        let key = (op.global_pid & PID_MASK, op.correlation);
        let at = *by_launch.entry(key).or_insert_with(|| {
            list.push(Execution {
                device: op.device,
                stream: op.stream,
                graph_id: None,
                graph_exec_id: None,
                first_node_id: None,
                start: op.start,
                end: op.end,
                kernels: Some(Vec::new()),
                call: *call,
                global_pid: op.global_pid,
                correlation: op.correlation,
            });
            list.len() - 1
        });
        if let Some(e) = list.get_mut(at) {
            e.start = e.start.min(op.start);
            e.end = e.end.max(op.end);
            if op.graph >= 0 {
                e.first_node_id = Some(e.first_node_id.map_or(op.graph, |n| n.min(op.graph)));
            }
            if op.kind == OpKind::Kernel {
                if let Some(k) = e.kernels.as_mut() {
                    k.push((op.start, op.end));
                }
            }
        }
    }
    list.sort_by_key(|e| (e.start, e.end, e.device, e.correlation));
    let mode = match (graph_rows, node_rows) {
        (true, true) => "graph+node",
        (true, false) => "graph",
        (false, true) => "node",
        (false, false) => "none",
    };
    Executions { mode, list }
}

/// Facts of one graph (one executable graph on one device).
#[derive(Debug, Clone, Serialize)]
pub struct GraphFacts {
    pub device_id: i64,
    /// `graphId` (graph-level traces; null in node-level traces, whose export names none).
    pub graph_id: Option<i64>,
    pub graph_exec_id: Option<i64>,
    /// Node-level traces: the smallest `graphNodeId` of its executions (the graph's key there).
    pub first_node_id: Option<i64>,
    /// Whether `CUDA_GRAPH_EVENTS` records the creation of this graph exec (graph-level traces).
    pub exec_created_in_capture: Option<bool>,
    /// Distinct launch calls found for its executions.
    pub launches: u64,
    pub executions: u64,
    /// Executions whose launch call is not in the export (counted, never dropped).
    pub unlinked_executions: u64,
    /// GPU time per execution: first start to last end of the execution.
    pub gpu_time: Distribution,
    /// Node-level traces: kernels per execution.
    pub kernels_per_execution: Option<CountDistribution>,
    /// Host time of each launch call (call end − call start).
    pub host_time: Distribution,
    /// Execution start − launch call start.
    pub launch_latency: Distribution,
}

/// Every graph fact of the selection.
#[derive(Debug, Clone, Serialize)]
pub struct Graphs {
    /// `graph` (GRAPH_TRACE rows), `node` (graphNodeId kernels), `graph+node`, or `none`.
    pub trace_mode: String,
    pub executions: u64,
    pub unlinked_executions: u64,
    pub graphs: Vec<GraphFacts>,
    /// How the trace mode shaped these numbers (a node-level trace inflates the launch call's host
    /// time); empty when nothing is to be said.
    pub notes: Vec<String>,
}

/// Node-level tracing makes the graph launch call itself slower: on the H200 decode captures of
/// the same workload (`h200/graphs/graph_graph.sqlite` vs `graph_node.sqlite`, 12 launches each) the
/// `cudaGraphLaunch` host time median was 24,469 ns graph-level and 94,874 ns node-level (3.9x;
/// means 28,320 and 105,803 ns), launch latency 26,118 vs 98,848 ns.
pub const NODE_LEVEL_NOTE: &str = "node-level trace (--cuda-graph-trace=node): tracing every node \
inflates the graph launch call's host time and launch latency (cudaGraphLaunch median 94,874 ns \
node-level vs 24,469 ns graph-level, 3.9x, on the H200 decode captures in \
references/formats/nsys-sqlite.md); host_time and launch_latency of node-level and graph-level \
captures are not comparable";

type Key = (i64, Option<i64>, Option<i64>, Option<i64>);

/// Facts per graph, in device, graph id, exec id, first node order.
pub fn graphs(schema: &Schema, strings: &Strings, sel: &Selection) -> Result<Graphs> {
    let all = ops::load(
        schema,
        strings,
        sel,
        &[
            OpKind::Kernel,
            OpKind::Memcpy,
            OpKind::Memset,
            OpKind::Graph,
        ],
    )?;
    let calls = ops::join_calls(
        schema,
        strings,
        all.iter().map(|o| (o.global_pid, o.correlation)),
    )?;
    of_executions(schema, &executions(strings, &all, &calls))
}

/// Facts per graph from the executions already found (what [`graphs`] computes after its join).
pub fn of_executions(schema: &Schema, ex: &Executions) -> Result<Graphs> {
    let created = created_execs(schema)?;
    let mut groups: BTreeMap<Key, Vec<&Execution>> = BTreeMap::new();
    for e in &ex.list {
        groups
            .entry((e.device, e.graph_id, e.graph_exec_id, e.first_node_id))
            .or_default()
            .push(e);
    }
    let graphs: Vec<GraphFacts> = groups
        .into_iter()
        .map(|((device, graph_id, exec_id, node), list)| {
            let mut calls: BTreeSet<(i64, i64)> = BTreeSet::new();
            let mut host = Vec::new();
            let mut latency = Vec::new();
            for e in &list {
                if let Some(c) = e.call {
                    if calls.insert((e.global_pid & PID_MASK, e.correlation)) {
                        host.push(c.end - c.start);
                    }
                    latency.push(e.start - c.start);
                }
            }
            let kernels: Option<Vec<i64>> = list
                .iter()
                .map(|e| e.kernels.as_ref().map(|k| count_i64(k.len())))
                .collect();
            Ok(GraphFacts {
                device_id: device,
                graph_id,
                graph_exec_id: exec_id,
                first_node_id: node,
                exec_created_in_capture: exec_id
                    .filter(|_| schema.table(&GRAPH_EVENTS).is_some())
                    .map(|x| created.contains(&x)),
                launches: u64::try_from(calls.len()).unwrap_or(u64::MAX),
                executions: u64::try_from(list.len()).unwrap_or(u64::MAX),
                unlinked_executions: u64::try_from(
                    list.iter().filter(|e| e.call.is_none()).count(),
                )
                .unwrap_or(u64::MAX),
                gpu_time: Distribution::of(list.iter().map(|e| e.end - e.start).collect())?,
                kernels_per_execution: kernels.map(CountDistribution::of).transpose()?,
                host_time: Distribution::of(host)?,
                launch_latency: Distribution::of(latency)?,
            })
        })
        .collect::<Result<_>>()?;
    Ok(Graphs {
        trace_mode: ex.mode.to_string(),
        executions: u64::try_from(ex.list.len()).unwrap_or(u64::MAX),
        unlinked_executions: u64::try_from(ex.list.iter().filter(|e| e.call.is_none()).count())
            .unwrap_or(u64::MAX),
        graphs,
        notes: if ex.mode.contains("node") {
            vec![NODE_LEVEL_NOTE.to_string()]
        } else {
            Vec::new()
        },
    })
}

fn count_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The `graphExecId`s whose creation `CUDA_GRAPH_EVENTS` records.
fn created_execs(schema: &Schema) -> Result<BTreeSet<i64>> {
    let Some(table) = schema.table(&GRAPH_EVENTS) else {
        return Ok(BTreeSet::new());
    };
    let name = table.actual.clone();
    let rows = db::query_all(
        &schema.uri,
        &schema.path,
        &format!("SELECT graphExecId FROM \"{name}\" WHERE graphExecId IS NOT NULL"),
        |row| db::int(row, 0, &name, "graphExecId"),
    )?;
    Ok(rows.into_iter().collect())
}

/// Launch facts of graph executions on one device, apart from ordinary kernel launches: the latency
/// of an execution is measured from its launch call; a node's own latency is its start after the
/// end of the node before it in the same execution (node-level traces; negative when nodes overlap).
#[derive(Debug, Clone, Serialize)]
pub struct GraphLaunch {
    pub device_id: i64,
    pub executions: u64,
    pub matched: u64,
    /// Execution start − launch call start.
    pub launch_latency: Distribution,
    /// Execution start − launch call end.
    pub queue_delay: Distribution,
    /// Node-level traces: kernels of graph executions.
    pub node_kernels: u64,
    /// Node-level traces: each kernel's start − the end of the previous kernel of its execution
    /// (the first kernel of an execution has none).
    pub node_gap: Distribution,
}

/// Graph launch facts per device from the executions of the selection.
pub fn launch_facts(ex: &Executions) -> Result<Vec<GraphLaunch>> {
    #[derive(Default)]
    struct Acc {
        executions: u64,
        latency: Vec<i64>,
        queue: Vec<i64>,
        kernels: u64,
        gaps: Vec<i64>,
    }
    let mut per: BTreeMap<i64, Acc> = BTreeMap::new();
    for e in &ex.list {
        let a = per.entry(e.device).or_default();
        a.executions += 1;
        if let Some(c) = e.call {
            a.latency.push(e.start - c.start);
            a.queue.push(e.start - c.end);
        }
        if let Some(k) = &e.kernels {
            a.kernels += u64::try_from(k.len()).unwrap_or(u64::MAX);
            let mut prev_end: Option<i64> = None;
            for &(s, end) in k {
                if let Some(p) = prev_end {
                    a.gaps.push(s - p);
                }
                prev_end = Some(prev_end.map_or(end, |p| p.max(end)));
            }
        }
    }
    per.into_iter()
        .map(|(device, a)| {
            Ok(GraphLaunch {
                device_id: device,
                executions: a.executions,
                matched: u64::try_from(a.latency.len()).unwrap_or(u64::MAX),
                launch_latency: Distribution::of(a.latency)?,
                queue_delay: Distribution::of(a.queue)?,
                node_kernels: a.kernels,
                node_gap: Distribution::of(a.gaps)?,
            })
        })
        .collect()
}
