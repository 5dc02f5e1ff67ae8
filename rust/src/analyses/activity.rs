//! The format-neutral record the analyses read: GPU operations in launch order, the host calls that
//! launched or waited for them, host threads, and the ranges that may mark steps.
//!
//! An engine fills a [`Builder`] (names interned, calls and operations in any order) and
//! [`Builder::finish`] sorts them: calls by (thread, start, end), operations by launch (the start of
//! the call that launched them, else their own start, then their start on the GPU).

use super::permute::permute;
use crate::error::{codes, Error, Result};
use rayon::slice::ParallelSliceMut;
use std::collections::HashMap;

/// "No index" in index fields.
pub const NONE: u32 = u32::MAX;

/// What a GPU operation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpClass {
    Kernel,
    Memcpy,
    Memset,
    /// One CUDA-graph execution recorded as a whole (nsys `--cuda-graph-trace=graph`).
    Graph,
}

impl OpClass {
    pub fn as_str(self) -> &'static str {
        match self {
            OpClass::Kernel => "kernel",
            OpClass::Memcpy => "memcpy",
            OpClass::Memset => "memset",
            OpClass::Graph => "graph",
        }
    }

    /// Copies and sets (GPU memory work), as opposed to kernels and graph executions (compute).
    pub fn is_memory(self) -> bool {
        matches!(self, OpClass::Memcpy | OpClass::Memset)
    }
}

/// One GPU operation (32 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuOp {
    pub start: i64,
    pub end: i64,
    /// Index into [`Activity::lanes`].
    pub lane: u32,
    /// Index into [`Activity::names`].
    pub name: u32,
    /// Index into [`Activity::calls`] of the call that launched it, or [`NONE`].
    pub call: u32,
    pub class: OpClass,
}

/// Where operations run: a device's stream, and the process that launched on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lane {
    pub device: i64,
    pub stream: i64,
    /// Index into [`Activity::processes`].
    pub process: u32,
}

/// What a host call did, as the analyses need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallKind {
    /// It launched GPU work (a kernel launch, an async copy or set, a graph launch).
    Launch,
    /// It blocks the host until GPU work finishes (`cudaDeviceSynchronize`, `cudaStreamSynchronize`,
    /// `cudaEventSynchronize`, their driver forms).
    Sync,
}

/// One host call that launched GPU work or waited for it (32 bytes). Other calls are host time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostCall {
    pub start: i64,
    pub end: i64,
    /// Index into [`Activity::threads`].
    pub thread: u32,
    /// Index into [`Activity::names`].
    pub name: u32,
    pub kind: CallKind,
}

/// A host thread: its process and how the file names it (`pid/tid`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Thread {
    pub process: u32,
    pub label: String,
}

/// A host range that may mark steps (an NVTX range, a `record_function`), top-level on its thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// Index into [`Activity::names`]: the range's own name (`step_3`).
    pub name: u32,
    pub start: i64,
    pub end: i64,
    pub thread: u32,
}

/// Everything the analyses read from one capture.
#[derive(Debug, Default)]
pub struct Activity {
    /// In launch order.
    pub ops: Vec<GpuOp>,
    pub lanes: Vec<Lane>,
    /// Sorted by (thread, start, end).
    pub calls: Vec<HostCall>,
    pub threads: Vec<Thread>,
    /// How the file names each process (`pid`).
    pub processes: Vec<String>,
    pub names: Vec<String>,
    /// Top-level ranges of every thread, sorted by (start, end).
    pub markers: Vec<Marker>,
    /// What the markers are: `nvtx` or `record_function`.
    pub marker_kind: &'static str,
}

impl Activity {
    pub fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", String::as_str)
    }

    pub fn lane(&self, op: &GpuOp) -> Lane {
        self.lanes.get(op.lane as usize).copied().unwrap_or(Lane {
            device: -1,
            stream: -1,
            process: NONE,
        })
    }

    pub fn call(&self, index: u32) -> Option<&HostCall> {
        self.calls.get(index as usize)
    }

    pub fn thread_label(&self, thread: u32) -> &str {
        self.threads
            .get(thread as usize)
            .map_or("", |t| t.label.as_str())
    }

    pub fn process_of_thread(&self, thread: u32) -> u32 {
        self.threads
            .get(thread as usize)
            .map_or(NONE, |t| t.process)
    }

    /// When the operation was launched: its call's start, else its own start.
    pub fn launched_at(&self, op: &GpuOp) -> i64 {
        self.call(op.call).map_or(op.start, |c| c.start)
    }

    /// The devices that ran operations, ascending.
    pub fn devices(&self) -> Vec<i64> {
        let mut devices: Vec<i64> = self.lanes.iter().map(|l| l.device).collect();
        devices.sort_unstable();
        devices.dedup();
        devices
    }

    /// Indices of the operations of one device, in launch order.
    pub fn ops_of_device(&self, device: i64) -> Vec<u32> {
        self.ops
            .iter()
            .enumerate()
            .filter(|(_, op)| self.lane(op).device == device)
            .map(|(i, _)| index(i))
            .collect()
    }
}

/// A `usize` index as `u32` (the builder refuses more than `u32::MAX - 1` items).
pub fn index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(NONE)
}

fn too_many(what: &str) -> Error {
    Error::input(
        codes::INPUT_TOO_LARGE,
        format!("more than 2^32 - 1 {what} in one capture"),
    )
}

/// Collects a capture's record in any order; [`Builder::finish`] sorts it.
#[derive(Debug, Default)]
pub struct Builder {
    activity: Activity,
    name_index: HashMap<String, u32>,
    lane_index: HashMap<Lane, u32>,
    thread_index: HashMap<(u32, String), u32>,
    process_index: HashMap<String, u32>,
    ranges: Vec<Marker>,
    /// Per call, what tells two calls of one thread, start and end apart (the engine's name id), when
    /// such calls are one call ([`Self::call_identified`]).
    identity: Vec<u32>,
}

impl Builder {
    pub fn new(marker_kind: &'static str) -> Self {
        let mut b = Self::default();
        b.activity.marker_kind = marker_kind;
        b
    }

    pub fn name(&mut self, text: &str) -> Result<u32> {
        if let Some(&id) = self.name_index.get(text) {
            return Ok(id);
        }
        let id = u32::try_from(self.activity.names.len())
            .ok()
            .filter(|&i| i != NONE)
            .ok_or_else(|| too_many("names"))?;
        self.activity.names.push(text.to_string());
        self.name_index.insert(text.to_string(), id);
        Ok(id)
    }

    pub fn process(&mut self, label: &str) -> Result<u32> {
        if let Some(&id) = self.process_index.get(label) {
            return Ok(id);
        }
        let id = u32::try_from(self.activity.processes.len()).map_err(|_| too_many("processes"))?;
        self.activity.processes.push(label.to_string());
        self.process_index.insert(label.to_string(), id);
        Ok(id)
    }

    pub fn thread(&mut self, process: u32, label: &str) -> Result<u32> {
        let key = (process, label.to_string());
        if let Some(&id) = self.thread_index.get(&key) {
            return Ok(id);
        }
        let id = u32::try_from(self.activity.threads.len()).map_err(|_| too_many("threads"))?;
        self.activity.threads.push(Thread {
            process,
            label: label.to_string(),
        });
        self.thread_index.insert(key, id);
        Ok(id)
    }

    pub fn lane(&mut self, lane: Lane) -> Result<u32> {
        if let Some(&id) = self.lane_index.get(&lane) {
            return Ok(id);
        }
        let id = u32::try_from(self.activity.lanes.len()).map_err(|_| too_many("streams"))?;
        self.activity.lanes.push(lane);
        self.lane_index.insert(lane, id);
        Ok(id)
    }

    /// Adds a call; the returned index is what operations name in `call` (remapped by `finish`).
    pub fn call(&mut self, call: HostCall) -> Result<u32> {
        let id = u32::try_from(self.activity.calls.len())
            .ok()
            .filter(|&i| i != NONE)
            .ok_or_else(|| too_many("host calls"))?;
        self.activity.calls.push(call);
        Ok(id)
    }

    /// Adds a call that is the same call as any other added with equal thread, start, end and
    /// `identity` (an engine's name id): [`Self::finish`] keeps the first added, and the operations
    /// of the others point to it (graph nodes share their `cudaGraphLaunch`). Use it for every call
    /// of a capture or for none.
    pub fn call_identified(&mut self, call: HostCall, identity: u32) -> Result<u32> {
        let id = self.call(call)?;
        self.identity.push(identity);
        Ok(id)
    }

    pub fn op(&mut self, op: GpuOp) -> Result<()> {
        if self.activity.ops.len() >= NONE as usize {
            return Err(too_many("GPU operations"));
        }
        self.activity.ops.push(op);
        Ok(())
    }

    /// Adds a host range; [`Self::finish`] keeps the top-level ones of each thread.
    pub fn range(&mut self, range: Marker) {
        self.ranges.push(range);
    }

    pub fn reserve_ops(&mut self, n: usize) {
        self.activity.ops.reserve(n);
    }

    /// Adds operations at once (taking the vector as it is when there are none yet).
    pub fn ops(&mut self, ops: Vec<GpuOp>) -> Result<()> {
        if self.activity.ops.len().saturating_add(ops.len()) >= NONE as usize {
            return Err(too_many("GPU operations"));
        }
        if self.activity.ops.is_empty() {
            self.activity.ops = ops;
        } else {
            self.activity.ops.extend(ops);
        }
        Ok(())
    }

    /// Sorts what was added: calls by (thread, start, end), repeats of one call merged, operations
    /// following their calls; operations by launch.
    pub fn finish(mut self) -> Activity {
        let identity = std::mem::take(&mut self.identity);
        let a = &mut self.activity;
        let place = sort_calls(&mut a.calls, identity);
        for op in &mut a.ops {
            op.call = place.get(op.call as usize).copied().unwrap_or(NONE);
        }
        drop(place);
        sort_ops(a);
        a.markers = top_level(std::mem::take(&mut self.ranges));
        self.activity
    }
}

// Both sorts go through 16-byte keys and permute in place: on a large export the calls and
// operations are most of the memory, and a second copy of either was the command's peak.

/// Sorts `calls` by (thread, start, end), ties by the added position (the stable order), keeping
/// the first of the calls with equal (thread, start, end) and `identity` (when there are
/// identities, see [`Builder::call_identified`]); where each added call went.
fn sort_calls(calls: &mut Vec<HostCall>, identity: Vec<u32>) -> Vec<u32> {
    let key = |i: u32| calls.get(i as usize).map(|c| (c.thread, c.start, c.end));
    // (thread, position, start) sorted by thread and start; the rare ties read the ends.
    let mut keyed: Vec<(u32, u32, i64)> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| (c.thread, index(i), c.start))
        .collect();
    keyed.par_sort_unstable_by(|x, y| {
        (x.0, x.2)
            .cmp(&(y.0, y.2))
            .then_with(|| key(x.1).cmp(&key(y.1)))
            .then(x.1.cmp(&y.1))
    });
    let order: Vec<u32> = keyed.iter().map(|k| k.1).collect();
    drop(keyed);
    let merge = !identity.is_empty();
    let mut place = vec![NONE; calls.len()];
    let mut kept = vec![false; calls.len()];
    let mut count = 0_u32;
    // The calls kept of the current (thread, start, end): (identity, new place).
    let mut same: Vec<(u32, u32)> = Vec::new();
    for (k, &old) in order.iter().enumerate() {
        if merge {
            let previous = k.checked_sub(1).and_then(|p| order.get(p)).copied();
            if previous.is_none_or(|p| key(p) != key(old)) {
                same.clear();
            }
            let id = identity.get(old as usize).copied().unwrap_or(NONE);
            if let Some(&(_, at)) = same.iter().find(|(i, _)| *i == id) {
                if let Some(slot) = place.get_mut(old as usize) {
                    *slot = at;
                }
                continue;
            }
            same.push((id, count));
        }
        if let Some(slot) = place.get_mut(old as usize) {
            *slot = count;
        }
        if let Some(flag) = kept.get_mut(k) {
            *flag = true;
        }
        count += 1;
    }
    drop(identity);
    permute(calls, &order);
    drop(order);
    let mut k = 0;
    calls.retain(|_| {
        k += 1;
        kept.get(k - 1).copied().unwrap_or(false)
    });
    place
}

/// Sorts the operations by launch (their call's start, else their own), then start, end, lane,
/// name, class and the added position: the stable order. Ties on the launch read the operations.
fn sort_ops(a: &mut Activity) {
    let calls = &a.calls;
    let launched = |op: &GpuOp| calls.get(op.call as usize).map_or(op.start, |c| c.start);
    let ops = &a.ops;
    let rest = |i: u32| {
        ops.get(i as usize)
            .map(|op| (op.start, op.end, op.lane, op.name, op.class))
    };
    let mut keyed: Vec<(i64, u32)> = ops
        .iter()
        .enumerate()
        .map(|(i, op)| (launched(op), index(i)))
        .collect();
    keyed.par_sort_unstable_by(|x, y| {
        x.0.cmp(&y.0)
            .then_with(|| rest(x.1).cmp(&rest(y.1)))
            .then(x.1.cmp(&y.1))
    });
    let order: Vec<u32> = keyed.iter().map(|&(_, i)| i).collect();
    drop(keyed);
    permute(&mut a.ops, &order);
}

/// The ranges no other range of the same thread contains, sorted by (start, end).
fn top_level(mut ranges: Vec<Marker>) -> Vec<Marker> {
    ranges.sort_by_key(|r| (r.thread, r.start, std::cmp::Reverse(r.end)));
    let mut out: Vec<Marker> = Vec::new();
    let mut open: Option<(u32, i64)> = None; // (thread, end) of the last top-level range
    for r in ranges {
        match open {
            Some((thread, end)) if thread == r.thread && r.start < end => {}
            _ => {
                open = Some((r.thread, r.end));
                out.push(r);
            }
        }
    }
    out.sort_by_key(|r| (r.start, r.end, r.thread));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(start: i64, end: i64, thread: u32) -> Marker {
        Marker {
            name: 0,
            start,
            end,
            thread,
        }
    }

    #[test]
    fn nested_and_overlapping_ranges_are_not_top_level() {
        let kept = top_level(vec![
            marker(0, 100, 0),
            marker(10, 20, 0),
            marker(90, 120, 0),
            marker(100, 150, 0),
            marker(5, 15, 1),
        ]);
        assert_eq!(
            kept,
            vec![marker(0, 100, 0), marker(5, 15, 1), marker(100, 150, 0)]
        );
    }

    #[test]
    fn identified_repeats_of_a_call_are_one_call() -> Result<()> {
        // A cudaGraphLaunch seen once per node (the same call twice), and another API at the same
        // instant on the same thread: the repeat merges into the first, the other stays.
        let mut b = Builder::new("nvtx");
        let p = b.process("1")?;
        let t = b.thread(p, "1/1")?;
        let lane = b.lane(Lane {
            device: 0,
            stream: 7,
            process: p,
        })?;
        let call = |kind| HostCall {
            start: 10,
            end: 20,
            thread: t,
            name: 0,
            kind,
        };
        let first = b.call_identified(call(CallKind::Launch), 5)?;
        let repeat = b.call_identified(call(CallKind::Sync), 5)?;
        let other = b.call_identified(call(CallKind::Sync), 6)?;
        for (start, c) in [(30, first), (40, repeat), (50, other)] {
            b.op(GpuOp {
                start,
                end: start + 1,
                lane,
                name: 0,
                call: c,
                class: OpClass::Kernel,
            })?;
        }
        let a = b.finish();
        assert_eq!(a.calls.len(), 2);
        let calls: Vec<(u32, CallKind)> = a
            .ops
            .iter()
            .map(|o| (o.call, a.calls[o.call as usize].kind))
            .collect();
        assert_eq!(
            calls,
            vec![
                (0, CallKind::Launch),
                (0, CallKind::Launch),
                (1, CallKind::Sync)
            ]
        );
        Ok(())
    }

    #[test]
    fn operations_follow_their_calls_into_launch_order() -> Result<()> {
        let mut b = Builder::new("nvtx");
        let p = b.process("1")?;
        let t1 = b.thread(p, "1/2")?;
        let t0 = b.thread(p, "1/1")?;
        let lane = b.lane(Lane {
            device: 0,
            stream: 7,
            process: p,
        })?;
        let late = b.call(HostCall {
            start: 50,
            end: 60,
            thread: t1,
            name: 0,
            kind: CallKind::Launch,
        })?;
        let early = b.call(HostCall {
            start: 10,
            end: 20,
            thread: t0,
            name: 0,
            kind: CallKind::Launch,
        })?;
        for (start, call) in [(70, late), (30, early), (5, NONE)] {
            b.op(GpuOp {
                start,
                end: start + 1,
                lane,
                name: 0,
                call,
                class: OpClass::Kernel,
            })?;
        }
        let a = b.finish();
        let starts: Vec<i64> = a.ops.iter().map(|o| o.start).collect();
        assert_eq!(starts, vec![5, 30, 70]);
        let launched: Vec<i64> = a.ops.iter().map(|o| a.launched_at(o)).collect();
        assert_eq!(launched, vec![5, 10, 50]);
        Ok(())
    }
}
