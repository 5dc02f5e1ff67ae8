//! GPU operations (kernels, memcpys, memsets, and CUDA-graph executions of a graph-level trace) as
//! compact rows, and their join to the CUDA API call that launched them (`correlationId` *and*
//! process: correlation ids are unique only per process).

use super::hash::IdMap;
use super::scan;
use super::schema::{Schema, GRAPH_TRACE, KERNEL, MEMCPY, MEMSET, RUNTIME};
use super::select::{Selection, PID_MASK};
use super::strings::Strings;
use crate::error::Result;
use rayon::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpKind {
    Kernel,
    Memcpy,
    Memset,
    /// One execution of a CUDA graph, as `--cuda-graph-trace=graph` records it
    /// (`CUPTI_ACTIVITY_KIND_GRAPH_TRACE`): its kernels are not traced one by one.
    Graph,
}

impl OpKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Kernel => "kernel",
            OpKind::Memcpy => "memcpy",
            OpKind::Memset => "memset",
            OpKind::Graph => "graph",
        }
    }
}

/// One GPU operation.
#[derive(Debug, Clone, Copy)]
pub struct Op {
    pub kind: OpKind,
    pub rowid: i64,
    pub start: i64,
    pub end: i64,
    pub device: i64,
    pub stream: i64,
    pub global_pid: i64,
    pub correlation: i64,
    /// Kernels: the demangled name's string index. Memcpys: `copyKind`. Memsets: `memKind` or -1.
    /// Graph executions: `graphId`.
    pub name: i64,
    /// Bytes moved or set (0 for kernels).
    pub bytes: i64,
    /// Memcpys: `srcKind` and `dstKind` (−1 otherwise).
    pub src_kind: i64,
    pub dst_kind: i64,
    /// Graph executions: `graphExecId`. Operations of a node-level trace: `graphNodeId`. Else −1.
    pub graph: i64,
}

impl Op {
    pub fn duration(&self) -> i64 {
        self.end - self.start
    }
}

/// Loads the selected operations of the given kinds, sorted by (start, end, kind, rowid).
pub fn load(
    schema: &Schema,
    strings: &Strings,
    sel: &Selection,
    kinds: &[OpKind],
) -> Result<Vec<Op>> {
    load_as(
        schema,
        strings,
        sel,
        kinds,
        |op| *op,
        |o| (o.start, o.end, o.kind, o.rowid),
    )
}

/// [`load`], keeping of each operation only what `map` makes of it as it is read (a caller that needs
/// a few fields holds a smaller record per operation, never the whole [`Op`]), sorted by `key`
/// (which must give the (start, end, kind, rowid) order of [`load`] for the same answers).
pub fn load_as<T, K, M, F>(
    schema: &Schema,
    strings: &Strings,
    sel: &Selection,
    kinds: &[OpKind],
    map: M,
    key: F,
) -> Result<Vec<T>>
where
    T: Send,
    K: Ord,
    M: Fn(&Op) -> T + Sync,
    F: Fn(&T) -> K + Sync,
{
    let mut all = Vec::new();
    for kind in kinds {
        let parts = load_kind(schema, strings, sel, *kind, &map)?;
        all.reserve(parts.iter().map(Vec::len).sum());
        for part in parts {
            all.extend(part);
        }
    }
    all.par_sort_unstable_by_key(key);
    Ok(all)
}

fn load_kind<T, M>(
    schema: &Schema,
    strings: &Strings,
    sel: &Selection,
    kind: OpKind,
    map: &M,
) -> Result<Vec<Vec<T>>>
where
    T: Send,
    M: Fn(&Op) -> T + Sync,
{
    let (source, extra): (_, &[&str]) = match kind {
        OpKind::Kernel => (&KERNEL, &["demangledName"]),
        OpKind::Memcpy => (&MEMCPY, &["copyKind", "bytes", "srcKind", "dstKind"]),
        OpKind::Memset if schema.has_column(&MEMSET, "memKind") => (&MEMSET, &["memKind", "bytes"]),
        OpKind::Memset => (&MEMSET, &["rowid", "bytes"]),
        OpKind::Graph => (&GRAPH_TRACE, &["graphId", "graphExecId"]),
    };
    let Some(table) = schema.table(source) else {
        return Ok(Vec::new());
    };
    let name = table.actual.clone();
    let mut columns = vec![
        "rowid",
        "start",
        "end",
        "deviceId",
        "streamId",
        "globalPid",
        "correlationId",
    ];
    columns.extend(extra);
    // Node-level traces mark the operations a graph launched with `graphNodeId`.
    let node_col = kind != OpKind::Graph && schema.has_column(source, "graphNodeId");
    if node_col {
        columns.push("graphNodeId");
    }
    let node_at = columns.len() - 1;
    let memset_kind = kind == OpKind::Memset && extra.first() == Some(&"memKind");
    let parts = scan::scan(
        schema,
        table,
        &columns,
        Vec::new,
        |acc: &mut Vec<T>, row| {
            let (start, end) = row.interval(1, 2)?;
            let global_pid = row.opt_int(5)?.unwrap_or(0);
            let correlation = row.opt_int(6)?.unwrap_or(0);
            if !sel.keep_gpu(start, end, global_pid, correlation) || !sel.keep_device(row.int(3)?) {
                return Ok(());
            }
            let name_value = match kind {
                OpKind::Kernel => {
                    i64::from(strings.resolve(row.int(7)?, &name, "demangledName")?)
                }
                OpKind::Memcpy => row.int(7)?,
                OpKind::Memset if memset_kind => row.opt_int(7)?.unwrap_or(-1),
                OpKind::Memset => -1,
                OpKind::Graph => row.int(7)?,
            };
            let (bytes, src_kind, dst_kind) = match kind {
                OpKind::Kernel => (0, -1, -1),
                OpKind::Memcpy => (
                    row.size_or_zero(8)?,
                    row.opt_int(9)?.unwrap_or(-1),
                    row.opt_int(10)?.unwrap_or(-1),
                ),
                OpKind::Memset => (row.size_or_zero(8)?, -1, -1),
                OpKind::Graph => (0, -1, -1),
            };
            let graph = match kind {
                OpKind::Graph => row.int(8)?,
                _ if node_col => row.opt_int(node_at)?.unwrap_or(-1),
                _ => -1,
            };
            acc.push(map(&Op {
                kind,
                rowid: row.int(0)?,
                start,
                end,
                device: row.int(3)?,
                stream: row.int(4)?,
                global_pid,
                correlation,
                name: name_value,
                bytes,
                src_kind,
                dst_kind,
                graph,
            }));
            Ok(())
        },
    )?;
    Ok(parts)
}

/// The CUDA API call that launched an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    pub start: i64,
    pub end: i64,
    pub global_tid: i64,
    /// The API name's string index.
    pub name: u32,
}

/// For each key `(globalPid, correlationId)`, the runtime call with that correlation id in that
/// process (None when the export has no such call, e.g. a trace window cut it off).
pub fn join_calls<I>(schema: &Schema, strings: &Strings, keys: I) -> Result<Vec<Option<Call>>>
where
    I: IntoIterator<Item = (i64, i64)>,
{
    let keys: Vec<(i64, i64)> = keys.into_iter().collect();
    let parts = join_each(
        schema,
        strings,
        keys.len(),
        |i| keys.get(i).copied().unwrap_or_default(),
        Vec::new,
        |acc: &mut Vec<(usize, Call)>, i, call| {
            acc.push((i, call));
            Ok(())
        },
    )?;
    let mut found: Vec<Option<Call>> = vec![None; keys.len()];
    for (i, call) in parts.into_iter().flatten() {
        if let Some(cell) = found.get_mut(i) {
            *cell = Some(call);
        }
    }
    Ok(found)
}

/// The join of keys `0..count` (`key_of(i)` = (globalPid, correlationId)) to the runtime calls with
/// that correlation id in that process: `hit(acc, i, call)` runs once for each key that has a call,
/// with the first such call in rowid order (a process that repeats a correlation id), folding into
/// per-worker accumulators (returned in scan order). What a caller keeps of a call is up to it: the
/// join holds only the keys' order (4 bytes a key) and one bit a key per worker.
///
/// A merge join: the keys are sorted once, and each runtime row finds its key by galloping from
/// where the previous row of its process landed. Runtime rows come in rowid order, which in nsys
/// exports follows the calls' order, and a process numbers its calls in order: the search moves
/// forward a step or two per row, instead of a random probe per row into a table larger than the
/// caches. Rows in any other order still find their key (a longer gallop); only the speed depends
/// on the order.
pub fn join_each<A, K, I, H>(
    schema: &Schema,
    strings: &Strings,
    count: usize,
    key_of: K,
    init: I,
    hit: H,
) -> Result<Vec<A>>
where
    A: Send,
    K: Fn(usize) -> (i64, i64) + Sync,
    I: Fn() -> A + Sync,
    H: Fn(&mut A, usize, Call) -> Result<()> + Sync,
{
    join_each_named(schema, strings, count, key_of, init, hit, &[], |_, _, _| {
        Ok(())
    })
}

/// [`join_each`], which also hands every call of chosen API names to `named(acc, correlationId,
/// call)` in the same pass over the runtime table (whether or not a key matches it): `names[i]` says
/// whether the string at canonical index `i` is one of them (one flag per string, looked up per row).
#[allow(clippy::too_many_arguments)]
pub fn join_each_named<A, K, I, H, N>(
    schema: &Schema,
    strings: &Strings,
    count: usize,
    key_of: K,
    init: I,
    hit: H,
    names: &[bool],
    named: N,
) -> Result<Vec<A>>
where
    A: Send,
    K: Fn(usize) -> (i64, i64) + Sync,
    I: Fn() -> A + Sync,
    H: Fn(&mut A, usize, Call) -> Result<()> + Sync,
    N: Fn(&mut A, i64, Call) -> Result<()> + Sync,
{
    let Some(table) = schema.table(&RUNTIME) else {
        return Ok(vec![init()]);
    };
    let order = {
        let mut sorted: Vec<(i64, i64, u32)> = Vec::with_capacity(count);
        for i in 0..count {
            let (pid, corr) = key_of(i);
            let at = u32::try_from(i).map_err(|_| {
                crate::error::Error::input(
                    crate::error::codes::INPUT_TOO_LARGE,
                    "more than 2^32 GPU operations to join to their calls",
                )
            })?;
            sorted.push((pid & PID_MASK, corr, at));
        }
        sorted.par_sort_unstable();
        sorted.into_iter().map(|k| k.2).collect::<Vec<u32>>()
    };
    let key_at = |pos: usize| -> Option<(i64, i64)> {
        let i = *order.get(pos)? as usize;
        let (pid, corr) = key_of(i);
        Some((pid & PID_MASK, corr))
    };
    let name = table.actual.clone();
    let words = count.div_ceil(64);
    let run = || {
        scan::scan(
            schema,
            table,
            &["start", "end", "globalTid", "correlationId", "nameId"],
            || Joined {
                cursor: Cursor::default(),
                seen: Vec::new(),
                acc: init(),
            },
            |j: &mut Joined<A>, row| {
                let Some(corr) = row.opt_int(3)? else {
                    return Ok(());
                };
                let tid = row.opt_int(2)?.unwrap_or(0);
                let key = (tid & PID_MASK, corr);
                let found = j.cursor.seek(order.len(), &key_at, key);
                let is_named = !names.is_empty()
                    && strings
                        .index(row.int(4)?)
                        .and_then(|i| names.get(i as usize).copied())
                        .unwrap_or(false);
                if found.is_none() && !is_named {
                    return Ok(());
                }
                let (start, end) = row.interval(0, 1)?;
                let call = Call {
                    start,
                    end,
                    global_tid: tid,
                    name: strings.resolve(row.int(4)?, &name, "nameId")?,
                };
                if is_named {
                    named(&mut j.acc, corr, call)?;
                }
                let Some(at) = found else {
                    return Ok(());
                };
                if j.seen.is_empty() {
                    j.seen = vec![0u64; words];
                }
                for pos in at..order.len() {
                    if key_at(pos) != Some(key) {
                        break;
                    }
                    let i = order.get(pos).map_or(0, |&i| i as usize);
                    if let Some(w) = j.seen.get_mut(i / 64) {
                        let bit = 1u64 << (i % 64);
                        if *w & bit != 0 {
                            continue; // a later call with the same key: the first one counts
                        }
                        *w |= bit;
                    }
                    hit(&mut j.acc, i, call)?;
                }
                Ok(())
            },
        )
    };
    let parts = run()?;
    if overlapping(&parts, words) {
        // A key matched in two workers' parts (a repeated correlation id across the split): only
        // the first call in rowid order may count, so join again in one part.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .map_err(|e| crate::error::Error::internal("thread_pool", e.to_string()))?;
        let single = pool.install(run)?;
        return Ok(single.into_iter().map(|j| j.acc).collect());
    }
    Ok(parts.into_iter().map(|j| j.acc).collect())
}

/// One scan worker's join state: its place in the keys, the keys it matched, what it made of them.
struct Joined<A> {
    cursor: Cursor,
    seen: Vec<u64>,
    acc: A,
}

/// Whether two parts matched the same key.
fn overlapping<A>(parts: &[Joined<A>], words: usize) -> bool {
    let mut union = vec![0u64; words];
    for part in parts {
        for (u, w) in union.iter_mut().zip(&part.seen) {
            if *u & *w != 0 {
                return true;
            }
            *u |= *w;
        }
    }
    false
}

/// One scan worker's place in the sorted keys (per process).
#[derive(Default)]
struct Cursor {
    /// The process of the previous row and where its key search ended.
    last: Option<(i64, usize)>,
    /// The same for every other process seen.
    by_process: IdMap<i64, usize>,
}

impl Cursor {
    /// The position of the first key equal to `key` among `n` sorted keys (`key_at`), if there is
    /// one, searching from where the last search of the same process ended.
    fn seek<K>(&mut self, n: usize, key_at: &K, key: (i64, i64)) -> Option<usize>
    where
        K: Fn(usize) -> Option<(i64, i64)>,
    {
        let hint = match self.last {
            Some((pid, at)) if pid == key.0 => at,
            Some((pid, at)) => {
                self.by_process.insert(pid, at);
                self.by_process.get(&key.0).copied().unwrap_or(0)
            }
            None => 0,
        };
        let at = lower_bound(n, |i| key_at(i).is_some_and(|k| k < key), hint);
        self.last = Some((key.0, at));
        (key_at(at) == Some(key)).then_some(at)
    }
}

/// The first position among `n` whose key is not `below` the wanted one, found by galloping from
/// `hint`.
fn lower_bound<B: Fn(usize) -> bool>(n: usize, below: B, hint: usize) -> usize {
    let hint = hint.min(n);
    let (mut lo, mut hi);
    if below(hint) {
        // Forward: the answer is after `hint`.
        lo = hint + 1;
        let mut step = 1usize;
        loop {
            let probe = hint.saturating_add(step);
            if probe >= n {
                hi = n;
                break;
            }
            if !below(probe) {
                hi = probe;
                break;
            }
            lo = probe + 1;
            step = step.saturating_mul(2);
        }
    } else {
        // Backward: the answer is at or before `hint`.
        hi = hint;
        lo = 0;
        let mut step = 1usize;
        while step <= hint {
            let probe = hint - step;
            if below(probe) {
                lo = probe + 1;
                break;
            }
            hi = probe;
            step = step.saturating_mul(2);
        }
    }
    // Binary search in [lo, hi).
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}
