//! Restricting facts to a time window or to one NVTX range.
//!
//! * A **window** `[start, end)` keeps an event whose interval overlaps it (`s < end && e > start`,
//!   or a zero-length event inside it). Summaries keep whole durations; timelines clip to the window.
//! * An **NVTX range** name keeps, for every instance of that range (push/pop or start/end ranges
//!   that end on their own thread): the CUDA API calls made on the range's thread inside the range,
//!   and the GPU operations those calls launched (joined on correlationId and process). This is the
//!   attribution rule of `nsys stats nvtx_kern_sum`: work belongs to the range it was *launched* in,
//!   wherever on the GPU it ran.

use super::codes;
use super::devices::DeviceMap;
use super::hash::{IdMap, IdSet};
use super::ranges::{self, NvtxData};
use super::scan;
use super::schema::{Schema, RUNTIME};
use crate::error::{Error, Result};
use crate::intervals::Span;
use serde::Serialize;

pub use super::schema::PID_MASK;

/// The parsed request: which window and/or range name.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Request {
    pub window_start_ns: Option<i64>,
    pub window_end_ns: Option<i64>,
    pub nvtx: Option<String>,
    /// Only this device: its GPU operations, and the CPU events of the processes that used it.
    pub device: Option<i64>,
}

/// A resolved selection, applied while rows stream by.
#[derive(Debug, Default)]
pub struct Selection {
    pub window: Option<Span>,
    pub nvtx: Option<NvtxFilter>,
    pub device: Option<DeviceFilter>,
}

/// One device, and the processes (pid bits) that ran GPU work on it.
#[derive(Debug, Default)]
pub struct DeviceFilter {
    pub device: i64,
    processes: IdSet<i64>,
}

/// The instances of one NVTX range and the launches made inside them.
#[derive(Debug, Default)]
pub struct NvtxFilter {
    pub name: String,
    pub instances: usize,
    /// Instance intervals per thread (`globalTid`), sorted by start, with the running maximum of
    /// their ends (so containment is one binary search).
    by_thread: IdMap<i64, (Vec<Span>, Vec<i64>)>,
    /// `(process bits, correlationId)` of every API call made inside an instance.
    launches: IdSet<(i64, i64)>,
}

impl Selection {
    /// Resolves a request against an export (the NVTX name must exist). `devices` gives the export's
    /// device map, asked for only when the request names a device.
    pub fn resolve<'d>(
        schema: &Schema,
        strings: &super::strings::Strings,
        req: &Request,
        devices: impl FnOnce() -> Result<&'d DeviceMap>,
    ) -> Result<Self> {
        let window = match (req.window_start_ns, req.window_end_ns) {
            (None, None) => None,
            (a, b) => {
                let w = Span::new(a.unwrap_or(i64::MIN), b.unwrap_or(i64::MAX));
                if w.end <= w.start {
                    return Err(Error::input(
                        codes::WINDOW_INVALID,
                        format!("the window {}:{} is empty", w.start, w.end),
                    )
                    .with_expected("START:END with START < END (ns, the file's clock)"));
                }
                Some(w)
            }
        };
        let nvtx = match &req.nvtx {
            None => None,
            Some(name) => Some(NvtxFilter::resolve(schema, strings, name)?),
        };
        let device = match req.device {
            None => None,
            Some(device) => Some(DeviceFilter {
                device,
                processes: devices()?.processes_of(device),
            }),
        };
        Ok(Self {
            window,
            nvtx,
            device,
        })
    }

    pub fn is_all(&self) -> bool {
        self.window.is_none() && self.nvtx.is_none() && self.device.is_none()
    }

    /// Whether the NVTX part needs the launch identity (process, correlationId) of GPU rows.
    pub fn needs_launch(&self) -> bool {
        self.nvtx.is_some()
    }

    #[inline]
    pub fn in_window(&self, start: i64, end: i64) -> bool {
        self.window
            .is_none_or(|w| start < w.end && (end > w.start || start >= w.start))
    }

    /// Keeps a GPU operation by its GPU interval and the API call that launched it.
    #[inline]
    pub fn keep_gpu(&self, start: i64, end: i64, global_pid: i64, correlation: i64) -> bool {
        self.in_window(start, end)
            && self
                .nvtx
                .as_ref()
                .is_none_or(|f| f.launches.contains(&(global_pid & PID_MASK, correlation)))
    }

    /// Whether the selection needs each CPU event's thread (`globalTid`).
    pub fn needs_thread(&self) -> bool {
        self.nvtx.is_some() || self.device.is_some()
    }

    /// Keeps a GPU operation by its device (every device when no device is selected).
    #[inline]
    pub fn keep_device(&self, device: i64) -> bool {
        self.device.as_ref().is_none_or(|d| d.device == device)
    }

    /// Keeps a CPU event (API call, NVTX range) by its interval and thread (and, with a device
    /// selected, only events of the processes that used that device).
    #[inline]
    pub fn keep_cpu(&self, start: i64, end: i64, global_tid: i64) -> bool {
        self.in_window(start, end)
            && self
                .device
                .as_ref()
                .is_none_or(|d| d.processes.contains(&(global_tid & PID_MASK)))
            && self
                .nvtx
                .as_ref()
                .is_none_or(|f| f.contains(global_tid, start, end))
    }
}

impl NvtxFilter {
    fn resolve(schema: &Schema, strings: &super::strings::Strings, name: &str) -> Result<Self> {
        let data = ranges::load(schema, strings)?;
        let mut spans_by_thread: IdMap<i64, Vec<Span>> = IdMap::default();
        let mut instances = 0usize;
        for r in data.ranges.iter().filter(|r| r.same_thread()) {
            if data.matches(r, name) {
                instances += 1;
                spans_by_thread
                    .entry(r.tid)
                    .or_default()
                    .push(Span::new(r.start, data.close_for_kernels(r.end())));
            }
        }
        if instances == 0 {
            return Err(unknown_range(name, &data));
        }
        let by_thread = spans_by_thread
            .into_iter()
            .map(|(tid, mut spans)| {
                spans.sort_unstable();
                let mut running = i64::MIN;
                let max_end = spans
                    .iter()
                    .map(|s| {
                        running = running.max(s.end);
                        running
                    })
                    .collect();
                (tid, (spans, max_end))
            })
            .collect();
        let mut filter = Self {
            name: name.to_string(),
            instances,
            by_thread,
            launches: IdSet::default(),
        };
        filter.launches = filter.launches_inside(schema)?;
        Ok(filter)
    }

    /// Whether `[start, end]` on thread `tid` lies inside one instance.
    pub fn contains(&self, tid: i64, start: i64, end: i64) -> bool {
        let Some((spans, max_end)) = self.by_thread.get(&tid) else {
            return false;
        };
        // Some instance starting at or before `start` reaches `end` iff the largest end among them does.
        let upto = spans.partition_point(|s| s.start <= start);
        upto > 0 && max_end.get(upto - 1).is_some_and(|&e| e >= end)
    }

    fn launches_inside(&self, schema: &Schema) -> Result<IdSet<(i64, i64)>> {
        let Some(table) = schema.table(&RUNTIME) else {
            return Ok(IdSet::default());
        };
        let parts = scan::scan(
            schema,
            table,
            &["start", "end", "globalTid", "correlationId"],
            IdSet::default,
            |acc: &mut IdSet<(i64, i64)>, row| {
                let (s, e) = row.interval(0, 1)?;
                let tid = row.opt_int(2)?.unwrap_or(0);
                if self.contains(tid, s, e) {
                    if let Some(corr) = row.opt_int(3)? {
                        acc.insert((tid & PID_MASK, corr));
                    }
                }
                Ok(())
            },
        )?;
        let mut all = IdSet::default();
        for part in parts {
            all.extend(part);
        }
        Ok(all)
    }
}

fn unknown_range(name: &str, data: &NvtxData) -> Error {
    let all: std::collections::BTreeSet<&str> = data.tags.iter().map(String::as_str).collect();
    let shown = crate::names::closest(name, all.iter().copied(), 8);
    let more = all.len().saturating_sub(shown.len());
    let mut observed = shown.join(", ");
    if more > 0 {
        observed.push_str(&format!(" … and {more} more"));
    }
    if observed.is_empty() {
        observed = "no NVTX ranges in this export".to_string();
    }
    Error::input(
        codes::NVTX_RANGE_UNKNOWN,
        format!("no NVTX range named {name:?} in this export (closest first: {observed})"),
    )
    .with_expected("a range text (e.g. step_3) or DOMAIN:TEXT as nvtx_sum prints it")
    .with_observed(observed)
}
