//! The GPU operations a timeline needs, 40 bytes each (not an [`Op`]'s 104): extent, correlation id,
//! graph node (or execution), kind, and an index into a small table of (device, stream, process)
//! lanes. A timeline of a 4 GB export holds millions of them at once; everything else an [`Op`] has
//! is rebuilt only for the few operations that belong to CUDA graphs.

use super::hash::IdMap;
use super::ops::{Op, OpKind};
use super::scan;
use super::schema::{Schema, GRAPH_TRACE, KERNEL, MEMCPY, MEMSET};
use super::select::Selection;
use super::strings::Strings;
use crate::error::{codes, Error, Result};

/// One GPU operation, as a timeline keeps it.
#[derive(Debug, Clone, Copy)]
pub struct Slim {
    pub start: i64,
    pub end: i64,
    pub correlation: i64,
    /// Graph executions: index into [`Slims::graph_ids`]. Operations of a node-level trace:
    /// `graphNodeId`. Else −1.
    pub graph: i64,
    /// Index into [`Slims::lanes`].
    pub lane: u32,
    pub kind: OpKind,
}

/// Where an operation ran and which process launched it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lane {
    pub device: i64,
    pub stream: i64,
    pub global_pid: i64,
}

/// The selected operations, sorted by (start, end, kind, rowid) like [`super::ops::load`].
pub struct Slims {
    pub ops: Vec<Slim>,
    pub lanes: Vec<Lane>,
    /// Graph executions: (`graphId`, `graphExecId`).
    pub graph_ids: Vec<(i64, i64)>,
}

impl Slims {
    pub fn lane(&self, op: &Slim) -> Lane {
        self.lanes.get(op.lane as usize).copied().unwrap_or(Lane {
            device: 0,
            stream: 0,
            global_pid: 0,
        })
    }

    /// Whether the operation belongs to a graph by what the export says of it (a graph execution,
    /// or a node of a node-level trace); the launch call may say so too ([`super::graphs`]).
    pub fn in_graph(op: &Slim) -> bool {
        op.kind == OpKind::Graph || op.graph >= 0
    }

    /// The whole [`Op`] (rowid, bytes and kernel names are not kept: graph facts do not read them).
    pub fn op(&self, op: &Slim) -> Op {
        let lane = self.lane(op);
        let (name, graph) = if op.kind == OpKind::Graph {
            usize::try_from(op.graph)
                .ok()
                .and_then(|i| self.graph_ids.get(i))
                .copied()
                .unwrap_or((-1, -1))
        } else {
            (-1, op.graph)
        };
        Op {
            kind: op.kind,
            rowid: -1,
            start: op.start,
            end: op.end,
            device: lane.device,
            stream: lane.stream,
            global_pid: lane.global_pid,
            correlation: op.correlation,
            name,
            bytes: 0,
            src_kind: -1,
            dst_kind: -1,
            graph,
        }
    }
}

/// One scan worker's rows, with lane and graph indices of its own.
#[derive(Default)]
struct Part {
    ops: Vec<Slim>,
    lanes: Vec<Lane>,
    index: IdMap<Lane, u32>,
    graph_ids: Vec<(i64, i64)>,
}

impl Part {
    fn lane(&mut self, lane: Lane) -> Result<u32> {
        if let Some(&i) = self.index.get(&lane) {
            return Ok(i);
        }
        let i = u32::try_from(self.lanes.len()).map_err(|_| too_many("lanes"))?;
        self.lanes.push(lane);
        self.index.insert(lane, i);
        Ok(i)
    }
}

fn too_many(what: &str) -> Error {
    Error::input(
        codes::INPUT_TOO_LARGE,
        format!("more than 2^32 {what} in one export"),
    )
}

/// Loads the selected operations of the given kinds (in [`OpKind`] order), sorted like
/// [`super::ops::load`]: rows come in (kind, rowid) order and a stable sort by (start, end, kind)
/// keeps that order among ties.
pub fn load(
    schema: &Schema,
    strings: &Strings,
    sel: &Selection,
    kinds: &[OpKind],
) -> Result<Slims> {
    let mut out = Slims {
        ops: Vec::new(),
        lanes: Vec::new(),
        graph_ids: Vec::new(),
    };
    let mut index: IdMap<Lane, u32> = IdMap::default();
    for kind in kinds {
        for part in load_kind(schema, strings, sel, *kind)? {
            let mut remap = Vec::with_capacity(part.lanes.len());
            for lane in part.lanes {
                let i = match index.get(&lane) {
                    Some(&i) => i,
                    None => {
                        let i = u32::try_from(out.lanes.len()).map_err(|_| too_many("lanes"))?;
                        out.lanes.push(lane);
                        index.insert(lane, i);
                        i
                    }
                };
                remap.push(i);
            }
            let offset = i64::try_from(out.graph_ids.len()).map_err(|_| too_many("graphs"))?;
            out.graph_ids.extend(part.graph_ids);
            out.ops.reserve(part.ops.len());
            for mut op in part.ops {
                op.lane = remap.get(op.lane as usize).copied().unwrap_or(op.lane);
                if op.kind == OpKind::Graph {
                    op.graph += offset;
                }
                out.ops.push(op);
            }
        }
    }
    // Stable, and fast on rows that come in runs already sorted (each table is mostly in time order).
    out.ops.sort_by_key(|o| (o.start, o.end, o.kind));
    Ok(out)
}

fn load_kind(
    schema: &Schema,
    strings: &Strings,
    sel: &Selection,
    kind: OpKind,
) -> Result<Vec<Part>> {
    let (source, extra): (_, &[&str]) = match kind {
        OpKind::Kernel => (&KERNEL, &["demangledName"]),
        OpKind::Memcpy | OpKind::Memset => (
            if kind == OpKind::Memcpy {
                &MEMCPY
            } else {
                &MEMSET
            },
            &[],
        ),
        OpKind::Graph => (&GRAPH_TRACE, &["graphId", "graphExecId"]),
    };
    let Some(table) = schema.table(source) else {
        return Ok(Vec::new());
    };
    let name = table.actual.clone();
    let mut columns = vec![
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
    scan::scan(
        schema,
        table,
        &columns,
        Part::default,
        |acc: &mut Part, row| {
            let (start, end) = row.interval(0, 1)?;
            let global_pid = row.opt_int(4)?.unwrap_or(0);
            let correlation = row.opt_int(5)?.unwrap_or(0);
            let device = row.int(2)?;
            if !sel.keep_gpu(start, end, global_pid, correlation) || !sel.keep_device(device) {
                return Ok(());
            }
            let graph = match kind {
                OpKind::Kernel => {
                    // Checked as the full load checks it: a dangling name id is an error.
                    strings.resolve(row.int(6)?, &name, "demangledName")?;
                    if node_col {
                        row.opt_int(node_at)?.unwrap_or(-1)
                    } else {
                        -1
                    }
                }
                OpKind::Graph => {
                    let at = i64::try_from(acc.graph_ids.len()).map_err(|_| too_many("graphs"))?;
                    acc.graph_ids.push((row.int(6)?, row.int(7)?));
                    at
                }
                _ if node_col => row.opt_int(node_at)?.unwrap_or(-1),
                _ => -1,
            };
            let lane = acc.lane(Lane {
                device,
                stream: row.int(3)?,
                global_pid,
            })?;
            acc.ops.push(Slim {
                start,
                end,
                correlation,
                graph,
                lane,
                kind,
            });
            Ok(())
        },
    )
}
