//! The summary document of a trace set: identity, counts, links, GPU timeline breakdowns and totals.

use super::collectives::{self, CollectiveTotals};
use super::events::Counts;
use super::header::Header;
use super::launches::{self, LaunchLatency};
use super::links::LinkStats;
use super::records::{CpuKind, GpuKind};
use super::timeline::{self, DeviceTimeline};
use super::transfers::{self, TransferTotal};
use super::{Platform, Trace, TraceSet};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct Summary {
    pub traces: Vec<TraceSummary>,
}

#[derive(Debug, Serialize)]
pub struct UnmodeledCount {
    pub kind: String,
    pub name: String,
    pub count: u64,
}

#[derive(Debug, Serialize)]
pub struct SyncTotals {
    pub count: usize,
    pub duration_ns: i64,
}

#[derive(Debug, Serialize)]
pub struct GpuSummary {
    pub devices: Vec<DeviceTimeline>,
    /// Sum of kernel durations (overlaps counted twice; see `devices[].busy_ns` for the union).
    pub kernel_time_ns: i64,
    pub launch_latency: Option<LaunchLatency>,
    pub transfers: Vec<TransferTotal>,
    pub collectives: Option<CollectiveTotals>,
}

#[derive(Debug, Serialize)]
pub struct TraceSummary {
    pub path: String,
    pub compressed: bool,
    /// The distributed rank (`rank` in the tables).
    pub global_rank: i64,
    pub global_rank_source: &'static str,
    pub platform: Platform,
    pub format: &'static str,
    pub header: Header,
    /// Start of the first kept complete event, in the trace's own clock (ns); relative times count
    /// from here.
    pub origin_ns: i64,
    /// From the first kept complete event's start to the last one's end.
    pub duration_ns: i64,
    pub counts: Counts,
    pub threads: usize,
    pub links: LinkStats,
    pub record_functions: usize,
    pub profiler_steps: usize,
    pub syncs: SyncTotals,
    /// GPU facts; null when the trace has no GPU activity (see `gpu_absent`).
    pub gpu: Option<GpuSummary>,
    /// Why `gpu` is null: "not present: ...".
    pub gpu_absent: Option<String>,
    pub unmodeled: Vec<UnmodeledCount>,
}

/// One line per trace: what it is, without computing any breakdown.
#[derive(Debug, Serialize)]
pub struct Overview {
    pub path: String,
    pub global_rank: i64,
    pub platform: Platform,
    pub format: &'static str,
    pub gpu_absent: Option<String>,
}

pub fn overview(set: &TraceSet) -> Vec<Overview> {
    set.traces
        .iter()
        .map(|t| Overview {
            path: t.path.clone(),
            global_rank: t.rank,
            platform: t.platform,
            format: t.format,
            gpu_absent: gpu_absent(t),
        })
        .collect()
}

/// Every trace's unmodeled content, summed by (kind, name).
pub fn unmodeled(set: &TraceSet) -> Vec<UnmodeledCount> {
    let mut sums: std::collections::BTreeMap<(String, String), u64> =
        std::collections::BTreeMap::new();
    for t in &set.traces {
        for (kind, name, count) in t.events.unmodeled.items() {
            *sums.entry((kind, name)).or_default() += count;
        }
    }
    sums.into_iter()
        .map(|((kind, name), count)| UnmodeledCount { kind, name, count })
        .collect()
}

fn gpu_absent(trace: &Trace) -> Option<String> {
    (!trace.gpu_present()).then(|| {
        format!(
            "not present: the trace has no GPU kernel, memcpy or memset events (platform {})",
            trace.platform.as_str()
        )
    })
}

pub fn summary(set: &TraceSet, threshold: i64) -> Summary {
    Summary {
        traces: set
            .traces
            .iter()
            .map(|t| trace_summary(t, threshold))
            .collect(),
    }
}

fn trace_summary(trace: &Trace, threshold: i64) -> TraceSummary {
    let ev = &trace.events;
    let annotations: Vec<&str> = ev
        .cpu
        .iter()
        .filter(|c| c.kind == CpuKind::Annotation)
        .map(|c| trace.name(c.name))
        .collect();
    let gpu = trace.gpu_present().then(|| {
        // Independent passes over the same events: on the pool side by side.
        let (devices, (launch_latency, (transfers, collectives))) = rayon::join(
            || timeline::devices(trace, threshold),
            || {
                rayon::join(
                    || launches::latency(trace),
                    || rayon::join(|| transfers::totals(trace), || collectives::totals(trace)),
                )
            },
        );
        GpuSummary {
            devices,
            kernel_time_ns: ev
                .gpu
                .iter()
                .filter(|e| e.kind == GpuKind::Kernel)
                .map(|e| e.end - e.start)
                .sum(),
            launch_latency,
            transfers,
            collectives,
        }
    });
    let gpu_absent = gpu_absent(trace);
    TraceSummary {
        path: trace.path.clone(),
        compressed: trace.compressed,
        global_rank: trace.rank,
        global_rank_source: trace.rank_source,
        platform: trace.platform,
        format: trace.format,
        header: trace.header.clone(),
        origin_ns: trace.origin(),
        duration_ns: ev.last_end.unwrap_or(0) - trace.origin(),
        counts: ev.counts.clone(),
        threads: ev.threads.len(),
        links: trace.links.stats.clone(),
        record_functions: annotations.len(),
        profiler_steps: annotations
            .iter()
            .filter(|n| n.starts_with("ProfilerStep#"))
            .count(),
        syncs: SyncTotals {
            count: ev.syncs.len(),
            duration_ns: ev.syncs.iter().map(|s| s.end - s.start).sum(),
        },
        gpu,
        gpu_absent,
        unmodeled: ev
            .unmodeled
            .items()
            .into_iter()
            .map(|(kind, name, count)| UnmodeledCount { kind, name, count })
            .collect(),
    }
}
