//! An export as the analyses' [`Activity`]: GPU operations (kernels, memcpys, memsets, graph
//! executions) with the runtime/driver call that launched each (joined on correlationId and process),
//! the calls of synchronizing APIs, and the NVTX ranges that end on their own thread.
//!
//! Names: a kernel's demangled name, `[CUDA memcpy <ENUM_CUDA_MEMCPY_OPER label>]`, `[CUDA memset]`,
//! `[CUDA graph <graphId>]` (as `nsys stats` and `gpuopt nsys` name them). Threads are `pid/tid`.

use super::api::strip_version;
use super::hash::IdMap;
use super::memory::enum_labels;
use super::ops::{self, Call, Op, OpKind};
use super::ranges;
use super::schema::{Schema, ENUM_MEMCPY_OPER};
use super::select::Selection;
use super::strings::Strings;
use super::sync::sync_api_flags;
use crate::analyses::activity::{
    Activity, Builder, CallKind, GpuOp, HostCall, Lane, Marker, OpClass, NONE,
};
use crate::error::Result;

/// What an operation keeps while the calls are joined.
#[derive(Debug, Clone, Copy)]
struct Raw {
    start: i64,
    end: i64,
    device: i64,
    stream: i64,
    global_pid: i64,
    correlation: i64,
    /// Kernel: string index; memcpy: copyKind; graph: graphId.
    name: i64,
    kind: OpKind,
}

impl Raw {
    fn of(op: &Op) -> Self {
        Self {
            start: op.start,
            end: op.end,
            device: op.device,
            stream: op.stream,
            global_pid: op.global_pid,
            correlation: op.correlation,
            name: op.name,
            kind: op.kind,
        }
    }
}

fn pid(global: i64) -> i64 {
    (global >> 24) & 0x00FF_FFFF
}

fn tid(global: i64) -> i64 {
    global & 0x00FF_FFFF
}

/// Ids of this load's own (an operation's name or lane), in the order they are first met.
struct Local<K> {
    index: IdMap<K, u32>,
    keys: Vec<K>,
}

impl<K> Default for Local<K> {
    fn default() -> Self {
        Self {
            index: IdMap::default(),
            keys: Vec::new(),
        }
    }
}

impl<K: Copy + Eq + std::hash::Hash> Local<K> {
    fn id(&mut self, key: K) -> u32 {
        if let Some(&id) = self.index.get(&key) {
            return id;
        }
        let id = crate::analyses::activity::index(self.keys.len());
        self.keys.push(key);
        self.index.insert(key, id);
        id
    }
}

/// Whether two hits are of one call (the key the calls are told apart by).
fn same_call(a: &Call, b: &Call) -> bool {
    (a.global_tid, a.start, a.end, a.name) == (b.global_tid, b.start, b.end, b.name)
}

/// The builder's ids of the export's processes, threads and API names, looked up by the export's
/// integers (a label is formatted and a name interned once each, not once per call).
#[derive(Default)]
struct Ids {
    processes: IdMap<i64, u32>,
    threads: IdMap<i64, u32>,
    apis: IdMap<u32, u32>,
}

impl Ids {
    /// The process of a globalPid or globalTid.
    fn process(&mut self, b: &mut Builder, global: i64) -> Result<u32> {
        let pid = pid(global);
        if let Some(&p) = self.processes.get(&pid) {
            return Ok(p);
        }
        let p = b.process(&pid.to_string())?;
        self.processes.insert(pid, p);
        Ok(p)
    }

    fn thread(&mut self, b: &mut Builder, global_tid: i64) -> Result<u32> {
        let key = global_tid & 0xFFFF_FFFF_FFFF;
        if let Some(&t) = self.threads.get(&key) {
            return Ok(t);
        }
        let process = self.process(b, global_tid)?;
        let t = b.thread(process, &format!("{}/{}", pid(global_tid), tid(global_tid)))?;
        self.threads.insert(key, t);
        Ok(t)
    }

    /// Adds a call; repeats of it (same thread, start, end and API) are merged by `Builder::finish`.
    fn call(
        &mut self,
        b: &mut Builder,
        strings: &Strings,
        call: &Call,
        kind: CallKind,
    ) -> Result<u32> {
        let thread = self.thread(b, call.global_tid)?;
        let name = match self.apis.get(&call.name) {
            Some(&n) => n,
            None => {
                let n = b.name(strip_version(strings.value(call.name)))?;
                self.apis.insert(call.name, n);
                n
            }
        };
        b.call_identified(
            HostCall {
                start: call.start,
                end: call.end,
                thread,
                name,
                kind,
            },
            call.name,
        )
    }
}

/// Loaded rows taken from the end at a time, each block's memory returned before the next.
const BLOCK: usize = 1 << 20;

/// The operations as kept (names and lanes as local ids), in the rows' order.
struct Kept {
    ops: Vec<GpuOp>,
    /// Each operation's (globalPid, correlationId), to join its call by.
    keys: Vec<(i64, i64)>,
    names: Local<(OpKind, i64)>,
    lanes: Local<(i64, i64, i64)>,
}

fn keep(mut raws: Vec<Raw>) -> Kept {
    let mut names: Local<(OpKind, i64)> = Local::default();
    let mut lanes: Local<(i64, i64, i64)> = Local::default();
    let mut keys: Vec<(i64, i64)> = Vec::with_capacity(raws.len());
    let mut ops: Vec<GpuOp> = Vec::with_capacity(raws.len());
    while !raws.is_empty() {
        let tail = raws.split_off(raws.len().saturating_sub(BLOCK));
        raws.shrink_to_fit();
        for r in tail.iter().rev() {
            keys.push((r.global_pid, r.correlation));
            ops.push(GpuOp {
                start: r.start,
                end: r.end,
                lane: lanes.id((r.global_pid, r.device, r.stream)),
                name: names.id((r.kind, r.name)),
                call: NONE,
                class: match r.kind {
                    OpKind::Kernel => OpClass::Kernel,
                    OpKind::Memcpy => OpClass::Memcpy,
                    OpKind::Memset => OpClass::Memset,
                    OpKind::Graph => OpClass::Graph,
                },
            });
        }
    }
    ops.reverse();
    keys.reverse();
    Kept {
        ops,
        keys,
        names,
        lanes,
    }
}

/// The selected part of an export as an [`Activity`].
pub fn load(schema: &Schema, strings: &Strings, sel: &Selection) -> Result<Activity> {
    let kinds = [
        OpKind::Kernel,
        OpKind::Memcpy,
        OpKind::Memset,
        OpKind::Graph,
    ];
    let raws = ops::load_as(schema, strings, sel, &kinds, Raw::of, |r| {
        (r.start, r.end, r.kind)
    })?;
    // The operations as they are kept, their names and lanes as local ids for now, and the join's
    // keys. The loaded rows are taken from their end a block at a time, their memory given back as
    // they go, so a large export's operations are held about once at the peak, not twice; the kept
    // records are built backwards and turned round after (local ids are only ever looked up).
    let Kept {
        mut ops,
        keys,
        names,
        lanes,
    } = keep(raws);
    let flags = sync_api_flags(strings);
    // Per worker: (operation, call) hits and the calls of synchronizing APIs.
    type Acc = (Vec<(u32, Call)>, Vec<Call>);
    let parts = ops::join_each_named(
        schema,
        strings,
        keys.len(),
        |i| keys.get(i).copied().unwrap_or((0, 0)),
        || -> Acc { (Vec::new(), Vec::new()) },
        |acc: &mut Acc, i, call| {
            acc.0.push((crate::analyses::activity::index(i), call));
            Ok(())
        },
        &flags,
        |acc: &mut Acc, _corr, call| {
            if sel.keep_cpu(call.start, call.end, call.global_tid) {
                acc.1.push(call);
            }
            Ok(())
        },
    )?;
    drop(keys);
    let opers = enum_labels(schema, &ENUM_MEMCPY_OPER)?;
    let mut b = Builder::new("nvtx");
    let mut ids = Ids::default();
    // Calls: one per distinct call (graph nodes share their cudaGraphLaunch: their hits come one after
    // another, and `Builder::finish` merges any other repeat of a call).
    for (hits, syncs) in parts {
        let mut last: Option<(Call, u32)> = None;
        for (i, call) in hits {
            let c = match last {
                Some((seen, c)) if same_call(&seen, &call) => c,
                _ => {
                    let is_sync = flags.get(call.name as usize).copied().unwrap_or(false);
                    let kind = if is_sync {
                        CallKind::Sync
                    } else {
                        CallKind::Launch
                    };
                    let c = ids.call(&mut b, strings, &call, kind)?;
                    last = Some((call, c));
                    c
                }
            };
            if let Some(op) = ops.get_mut(i as usize) {
                op.call = c;
            }
        }
        for call in syncs {
            ids.call(&mut b, strings, &call, CallKind::Sync)?;
        }
    }
    // Names and lanes into the builder in the order the operations first name them.
    let mut name_ids = vec![NONE; names.keys.len()];
    let mut lane_ids = vec![NONE; lanes.keys.len()];
    for op in &mut ops {
        let (Some(name), Some(lane)) = (
            name_ids.get_mut(op.name as usize),
            lane_ids.get_mut(op.lane as usize),
        ) else {
            continue;
        };
        if let (NONE, Some(&(kind, key))) = (*name, names.keys.get(op.name as usize)) {
            let text = match kind {
                OpKind::Kernel => strings
                    .value(u32::try_from(key).unwrap_or(u32::MAX))
                    .to_string(),
                OpKind::Memcpy => format!(
                    "[CUDA memcpy {}]",
                    opers.get(&key).map_or("Unknown", String::as_str)
                ),
                OpKind::Memset => "[CUDA memset]".to_string(),
                OpKind::Graph => format!("[CUDA graph {key}]"),
            };
            *name = b.name(&text)?;
        }
        if let (NONE, Some(&(global_pid, device, stream))) =
            (*lane, lanes.keys.get(op.lane as usize))
        {
            let process = ids.process(&mut b, global_pid)?;
            *lane = b.lane(Lane {
                device,
                stream,
                process,
            })?;
        }
        op.name = *name;
        op.lane = *lane;
    }
    b.ops(ops)?;
    let nvtx = ranges::load(schema, strings)?;
    for r in nvtx.ranges.iter().filter(|r| r.same_thread()) {
        let Some(end) = r.end() else { continue };
        if !sel.keep_cpu(r.start, end, r.tid) {
            continue;
        }
        let thread = ids.thread(&mut b, r.tid)?;
        let name = b.name(nvtx.text(r))?;
        b.range(Marker {
            name,
            start: r.start,
            end,
            thread,
        });
    }
    Ok(b.finish())
}
