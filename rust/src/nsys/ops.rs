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
                    row.opt_int(8)?.unwrap_or(0),
                    row.opt_int(9)?.unwrap_or(-1),
                    row.opt_int(10)?.unwrap_or(-1),
                ),
                OpKind::Memset => (row.opt_int(8)?.unwrap_or(0), -1, -1),
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
///
/// A merge join: the keys are sorted once (24 bytes each, no hash map), and each runtime row finds
/// its key by galloping from where the previous row of its process landed. Runtime rows come in
/// rowid order, which in nsys exports follows the calls' order, and a process numbers its calls in
/// order: the search moves forward a step or two per row through memory it just read, instead of
/// a random probe per row into a table larger than the caches. Rows in any other order still find
/// their key (a longer gallop); only the speed depends on the order.
pub fn join_calls<I>(schema: &Schema, strings: &Strings, keys: I) -> Result<Vec<Option<Call>>>
where
    I: IntoIterator<Item = (i64, i64)>,
{
    // (process bits, correlation id, index of the key): equal keys are neighbours.
    let mut sorted: Vec<(i64, i64, usize)> = keys
        .into_iter()
        .enumerate()
        .map(|(i, (pid, corr))| (pid & PID_MASK, corr, i))
        .collect();
    let count = sorted.len();
    sorted.par_sort_unstable();
    let mut found: Vec<Option<Call>> = Vec::new();
    if let Some(table) = schema.table(&RUNTIME) {
        let name = table.actual.clone();
        let parts = scan::scan(
            schema,
            table,
            &["start", "end", "globalTid", "correlationId", "nameId"],
            Cursor::default,
            |acc: &mut Cursor, row| {
                let Some(corr) = row.opt_int(3)? else {
                    return Ok(());
                };
                let tid = row.opt_int(2)?.unwrap_or(0);
                let Some(at) = acc.seek(&sorted, (tid & PID_MASK, corr)) else {
                    return Ok(());
                };
                let (start, end) = row.interval(0, 1)?;
                let api = strings.resolve(row.int(4)?, &name, "nameId")?;
                acc.hits.push((
                    at,
                    Call {
                        start,
                        end,
                        global_tid: tid,
                        name: api,
                    },
                ));
                Ok(())
            },
        )?;
        found = vec![None; count];
        for (at, call) in parts.into_iter().flat_map(|c| c.hits) {
            let key = sorted.get(at).map(|k| (k.0, k.1));
            for k in sorted.get(at..).unwrap_or_default() {
                if Some((k.0, k.1)) != key {
                    break;
                }
                if let Some(cell) = found.get_mut(k.2) {
                    // Keep the first call in rowid order if a process repeats a correlation id.
                    cell.get_or_insert(call);
                }
            }
        }
    }
    found.resize(count, None);
    Ok(found)
}

/// One scan worker's place in the sorted keys (per process) and the calls it matched.
#[derive(Default)]
struct Cursor {
    /// The process of the previous row and where its key search ended.
    last: Option<(i64, usize)>,
    /// The same for every other process seen.
    by_process: IdMap<i64, usize>,
    /// (position of the first equal key in the sorted keys, the call).
    hits: Vec<(usize, Call)>,
}

impl Cursor {
    /// The position of the first key equal to `key` in `sorted`, if there is one, searching from
    /// where the last search of the same process ended.
    fn seek(&mut self, sorted: &[(i64, i64, usize)], key: (i64, i64)) -> Option<usize> {
        let hint = match self.last {
            Some((pid, at)) if pid == key.0 => at,
            Some((pid, at)) => {
                self.by_process.insert(pid, at);
                self.by_process.get(&key.0).copied().unwrap_or(0)
            }
            None => 0,
        };
        let at = lower_bound(sorted, key, hint);
        self.last = Some((key.0, at));
        sorted.get(at).filter(|k| (k.0, k.1) == key).map(|_| at)
    }
}

/// The first position in `sorted` whose key is not below `key`, found by galloping from `hint`.
fn lower_bound(sorted: &[(i64, i64, usize)], key: (i64, i64), hint: usize) -> usize {
    let below = |i: usize| sorted.get(i).is_some_and(|k| (k.0, k.1) < key);
    let n = sorted.len();
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
    lo + sorted
        .get(lo..hi)
        .map_or(0, |part| part.partition_point(|k| (k.0, k.1) < key))
}
