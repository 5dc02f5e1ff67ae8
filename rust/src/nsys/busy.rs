//! What timeline reports of one device or stream (busy and idle time, gaps, kernel concurrency), and
//! the window clipping and gap statistics the lane sweep and the gap list share.

use super::distribution::Distribution;
use super::select::Selection;
use crate::intervals::Span;
use serde::Serialize;

/// Upper bounds (ns, exclusive) of the gap histogram buckets; the last bucket is open-ended.
const GAP_BUCKETS_NS: [i64; 5] = [1_000, 10_000, 100_000, 1_000_000, 10_000_000];

#[derive(Debug, Clone, Serialize)]
pub struct GapBucket {
    pub lower_ns: i64,
    pub upper_ns: Option<i64>,
    pub count: u64,
    pub total_ns: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Gaps {
    #[serde(flatten)]
    pub distribution: Distribution,
    pub histogram: Vec<GapBucket>,
}

#[derive(Debug, Clone, Serialize)]
pub struct KernelConcurrency {
    pub max_kernels: u32,
    /// Time-weighted mean number of kernels running while at least one runs.
    pub mean_kernels_when_busy: f64,
    /// `time_at_level_ns[k]`: time with exactly k kernels running (k = 0: idle between kernels).
    pub time_at_level_ns: Vec<i64>,
}

/// Busy/idle facts of one device or one stream.
#[derive(Debug, Clone, Serialize)]
pub struct Busy {
    pub kernels: u64,
    pub memcpys: u64,
    pub memsets: u64,
    /// Graph executions of a graph-level trace (`CUPTI_ACTIVITY_KIND_GRAPH_TRACE` rows).
    pub graph_executions: u64,
    pub span_start_ns: Option<i64>,
    pub span_end_ns: Option<i64>,
    pub span_ns: i64,
    pub busy_ns: i64,
    pub idle_ns: i64,
    pub busy_pct: f64,
    /// Union of kernels and graph executions.
    pub kernel_busy_ns: i64,
    pub graph_busy_ns: i64,
    pub copy_busy_ns: i64,
    pub compute_copy_overlap_ns: i64,
    pub kernel_only_ns: i64,
    pub copy_only_ns: i64,
    pub gaps: Gaps,
    pub concurrency: KernelConcurrency,
}

#[derive(Debug, Clone, Serialize)]
pub struct StreamTimeline {
    pub stream_id: i64,
    #[serde(flatten)]
    pub busy: Busy,
}

#[derive(Debug, Clone, Serialize)]
pub struct DeviceTimeline {
    pub device_id: i64,
    #[serde(flatten)]
    pub busy: Busy,
    pub streams: Vec<StreamTimeline>,
}

/// The interval `[start, end)`, clipped to the window when there is one.
pub fn clip(start: i64, end: i64, sel: &Selection) -> Option<Span> {
    let s = Span::new(start, end);
    match sel.window {
        Some(w) => s
            .clip(w)
            .or((s.is_empty() && sel.in_window(s.start, s.end)).then_some(s)),
        None => Some(s),
    }
}

pub fn gap_stats(lens: Vec<i64>) -> Gaps {
    let mut histogram: Vec<GapBucket> = Vec::new();
    let mut lower = 0i64;
    for upper in GAP_BUCKETS_NS.iter().copied().map(Some).chain([None]) {
        let inside: Vec<i64> = lens
            .iter()
            .copied()
            .filter(|&g| g >= lower && upper.is_none_or(|u| g < u))
            .collect();
        histogram.push(GapBucket {
            lower_ns: lower,
            upper_ns: upper,
            count: u64::try_from(inside.len()).unwrap_or(u64::MAX),
            total_ns: inside.iter().sum(),
        });
        lower = upper.unwrap_or(lower);
    }
    Gaps {
        // Gaps are disjoint inside the span, whose length fits: the sum cannot overflow.
        distribution: Distribution::of(lens).unwrap_or_default(),
        histogram,
    }
}
