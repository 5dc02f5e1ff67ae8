//! CUDA-graph replays in a Kineto trace: the GPU events a `cudaGraphLaunch` (`cuGraphLaunch`,
//! `hipGraphLaunch`) call launched make one execution of a graph.
//!
//! Kineto records no graph id, so a graph is known by the ordered names of its kernels: executions
//! whose kernels have the same names in the same order are executions of one graph (`graph_key`, a
//! 64-bit FNV-1a hash of those names, printed as 16 hex digits). Two graphs with identical kernel
//! sequences share a key.

use super::columns::{count, int, opt_int, text};
use super::distribution::{distribution, Distribution};
use super::fields;
use super::records::GpuKind;
use super::{Trace, TraceSet};
use crate::error::Result;
use crate::table::Table;
use serde::Serialize;
use std::collections::BTreeMap;

/// Whether a runtime or driver call launches a whole graph.
pub fn is_graph_launch(name: &str) -> bool {
    ["cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// One execution: the GPU events of one graph launch call, in start order.
pub struct Execution {
    pub key: u64,
    pub device: i64,
    pub call_start: i64,
    pub call_end: i64,
    pub start: i64,
    pub end: i64,
    /// Kernels (start, end), in start order.
    pub kernels: Vec<(i64, i64)>,
    pub first_kernel: u32,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// Every graph execution of a trace, in start order.
pub fn executions(trace: &Trace) -> Vec<Execution> {
    let ev = &trace.events;
    let mut out = Vec::new();
    for (r, call) in ev.runtime.iter().enumerate() {
        if !is_graph_launch(trace.name(call.name)) {
            continue;
        }
        let mut gpu: Vec<usize> = trace
            .links
            .gpu_of_runtime(r)
            .iter()
            .map(|&g| g as usize)
            .collect();
        gpu.sort_by_key(|&g| ev.gpu.get(g).map(|e| (e.start, e.end)));
        let events: Vec<_> = gpu.iter().filter_map(|&g| ev.gpu.get(g)).collect();
        let (Some(first), Some(start), Some(end)) = (
            events.first(),
            events.iter().map(|e| e.start).min(),
            events.iter().map(|e| e.end).max(),
        ) else {
            continue;
        };
        let mut key = FNV_OFFSET;
        let mut kernels = Vec::new();
        let mut first_kernel = first.name;
        for e in events.iter().filter(|e| e.kind == GpuKind::Kernel) {
            if kernels.is_empty() {
                first_kernel = e.name;
            }
            key = fnv(key, trace.name(e.name).as_bytes());
            key = fnv(key, &[0]);
            kernels.push((e.start, e.end));
        }
        out.push(Execution {
            key,
            device: first.device,
            call_start: call.start,
            call_end: call.end,
            start,
            end,
            kernels,
            first_kernel,
        });
    }
    out.sort_by_key(|e| (e.start, e.end));
    out
}

/// Launch facts of graph executions, apart from ordinary kernel launches.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GraphLaunch {
    pub executions: usize,
    /// Kernels of graph executions (left out of the ordinary launch latency).
    pub kernels: usize,
    /// Execution start (its first GPU event) − launch call start.
    pub launch_latency: Distribution,
    /// Each kernel's start − the end of the kernels before it in the same execution (absent when no
    /// execution has two kernels).
    pub node_gap: Option<Distribution>,
}

pub fn launch_facts(trace: &Trace) -> Option<GraphLaunch> {
    let ex = executions(trace);
    let latency = distribution(ex.iter().map(|e| e.start - e.call_start).collect())?;
    let mut gaps = Vec::new();
    for e in &ex {
        let mut prev: Option<i64> = None;
        for &(s, end) in &e.kernels {
            if let Some(p) = prev {
                gaps.push(s - p);
            }
            prev = Some(prev.map_or(end, |p| p.max(end)));
        }
    }
    Some(GraphLaunch {
        executions: ex.len(),
        kernels: ex.iter().map(|e| e.kernels.len()).sum(),
        launch_latency: latency,
        node_gap: distribution(gaps),
    })
}

/// `rank, graph_key, device, first_kernel, kernels_per_execution, launches, executions,
/// gpu_total_ns, gpu_median_ns, gpu_p90_ns, gpu_max_ns, host_median_ns, host_p90_ns, host_max_ns,
/// launch_latency_median_ns`: one row per graph and rank, in first-execution order.
pub fn table(set: &TraceSet) -> Result<Table> {
    let mut rank = Vec::new();
    let mut key = Vec::new();
    let mut device = Vec::new();
    let mut first = Vec::new();
    let mut kernels = Vec::new();
    let mut launches = Vec::new();
    let mut gpu: [Vec<Option<i64>>; 4] = Default::default();
    let mut host: [Vec<Option<i64>>; 3] = Default::default();
    let mut latency = Vec::new();
    for trace in &set.traces {
        let ex = executions(trace);
        let mut order: Vec<(u64, i64)> = Vec::new();
        let mut groups: BTreeMap<(u64, i64), Vec<&Execution>> = BTreeMap::new();
        for e in &ex {
            let k = (e.key, e.device);
            if !groups.contains_key(&k) {
                order.push(k);
            }
            groups.entry(k).or_default().push(e);
        }
        for k in order {
            let Some(list) = groups.get(&k) else { continue };
            let g = distribution(list.iter().map(|e| e.end - e.start).collect());
            let h = distribution(list.iter().map(|e| e.call_end - e.call_start).collect());
            let l = distribution(list.iter().map(|e| e.start - e.call_start).collect());
            rank.push(trace.rank);
            key.push(format!("{:016x}", k.0));
            device.push(k.1);
            first.push(
                list.first()
                    .map(|e| trace.name(e.first_kernel).to_owned())
                    .unwrap_or_default(),
            );
            kernels.push(list.first().map_or(0, |e| count(e.kernels.len())));
            launches.push(count(list.len()));
            gpu[0].push(Some(list.iter().map(|e| e.end - e.start).sum()));
            gpu[1].push(g.as_ref().map(|d| d.p50_ns));
            gpu[2].push(g.as_ref().map(|d| d.p90_ns));
            gpu[3].push(g.as_ref().map(|d| d.max_ns));
            host[0].push(h.as_ref().map(|d| d.p50_ns));
            host[1].push(h.as_ref().map(|d| d.p90_ns));
            host[2].push(h.as_ref().map(|d| d.max_ns));
            latency.push(l.as_ref().map(|d| d.p50_ns));
        }
    }
    let [g_total, g_med, g_p90, g_max] = gpu;
    let [h_med, h_p90, h_max] = host;
    Table::declared(
        fields::GRAPHS,
        vec![
            ("rank", int(rank)),
            ("graph_key", text(&key)),
            ("device", int(device)),
            ("first_kernel", text(&first)),
            ("kernels_per_execution", int(kernels)),
            ("executions", int(launches.clone())),
            ("launches", int(launches)),
            ("gpu_total_ns", opt_int(g_total)),
            ("gpu_median_ns", opt_int(g_med)),
            ("gpu_p90_ns", opt_int(g_p90)),
            ("gpu_max_ns", opt_int(g_max)),
            ("host_median_ns", opt_int(h_med)),
            ("host_p90_ns", opt_int(h_p90)),
            ("host_max_ns", opt_int(h_max)),
            ("launch_latency_median_ns", opt_int(latency)),
        ],
    )
}
