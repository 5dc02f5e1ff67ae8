//! GPU operations (kernels, memcpys, memsets, and CUDA-graph executions of a graph-level trace) as
//! compact rows, and their join to the CUDA API call that launched them (`correlationId` *and*
//! process: correlation ids are unique only per process).

use super::db;
use super::hash::IdMap;
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
    let parts = db::scan(
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
/// The keys stream in (no list of them is held beside the map), and the map is freed before the
/// answer is laid out.
pub fn join_calls<I>(schema: &Schema, strings: &Strings, keys: I) -> Result<Vec<Option<Call>>>
where
    I: IntoIterator<Item = (i64, i64)>,
    I::IntoIter: ExactSizeIterator,
{
    let keys = keys.into_iter();
    let mut slots: IdMap<(i64, i64), u32> = IdMap::default();
    slots.reserve(keys.len());
    // The slot of each key; distinct keys get slots 0, 1, 2, ... in order.
    let mut slot_of: Vec<u32> = Vec::with_capacity(keys.len());
    for (pid, corr) in keys {
        let next = u32::try_from(slots.len()).unwrap_or(u32::MAX);
        slot_of.push(*slots.entry((pid & PID_MASK, corr)).or_insert(next));
    }
    let distinct = slots.len();
    let mut found: Vec<Option<Call>> = Vec::new();
    if let Some(table) = schema.table(&RUNTIME) {
        let name = table.actual.clone();
        let parts = db::scan(
            schema,
            table,
            &["start", "end", "globalTid", "correlationId", "nameId"],
            Vec::new,
            |acc: &mut Vec<(u32, Call)>, row| {
                let Some(corr) = row.opt_int(3)? else {
                    return Ok(());
                };
                let tid = row.opt_int(2)?.unwrap_or(0);
                let Some(&slot) = slots.get(&(tid & PID_MASK, corr)) else {
                    return Ok(());
                };
                let (start, end) = row.interval(0, 1)?;
                let api = strings.resolve(row.int(4)?, &name, "nameId")?;
                acc.push((
                    slot,
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
        // The key map is done with: free it before the answer is laid out.
        drop(slots);
        found = vec![None; distinct];
        for (slot, call) in parts.into_iter().flatten() {
            if let Some(cell) = usize::try_from(slot).ok().and_then(|i| found.get_mut(i)) {
                // Keep the first call in rowid order if a process repeats a correlation id.
                cell.get_or_insert(call);
            }
        }
    }
    found.resize(distinct, None);
    if distinct == slot_of.len() {
        // Every key distinct (the usual case): key i has slot i, and `found` is the answer itself.
        return Ok(found);
    }
    Ok(slot_of
        .iter()
        .map(|&slot| found.get(usize::try_from(slot).ok()?).copied().flatten())
        .collect())
}
