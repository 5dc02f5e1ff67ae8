//! The path tree of one trace: every host range (`cpu_op`, `record_function`) gets the node of
//! its path, the chain of ranges enclosing it on its thread, outermost first.
//!
//! `ProfilerStep#N` ranges and `python_function`s are see-through: they take their parent's node
//! (a step would otherwise make its own copy of every path; with_stack's Python frames are the
//! Python stack, not the op stack).

use crate::torch_trace::graphs::is_graph_launch;
use crate::torch_trace::records::{CpuKind, FastMap, NONE};
use crate::torch_trace::Trace;

/// Not computed yet (distinct from `NONE`, "no path": outside every range).
const UNSET: u32 = u32::MAX - 1;

/// One distinct path: its last range and the path it extends.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    /// The enclosing path, or `NONE` at the top.
    pub parent: u32,
    pub name: u32,
    pub kind: CpuKind,
    /// 1 for a range with nothing around it.
    pub depth: u32,
    /// Start of the earliest range with this path (children are listed in this order).
    pub first_start: i64,
}

/// The nodes of a trace and the node of every host range.
pub struct Tree {
    pub nodes: Vec<Node>,
    /// Per CPU event: its path's node, or `NONE` (a see-through range outside every range).
    pub of_cpu: Vec<u32>,
}

/// Whether a host range is left out of paths (it takes its parent's path).
pub fn see_through(trace: &Trace, cpu: usize) -> bool {
    trace.events.cpu.get(cpu).is_some_and(|c| match c.kind {
        CpuKind::Python => true,
        CpuKind::Annotation => trace.name(c.name).starts_with("ProfilerStep#"),
        CpuKind::Op => false,
    })
}

/// Builds the tree: each range's node from its parent's, walking up only to the nearest range
/// already placed, so the work is linear in the ranges.
pub fn build(trace: &Trace) -> Tree {
    let cpu = &trace.events.cpu;
    let parents = &trace.links.cpu_parent;
    let mut of_cpu = vec![UNSET; cpu.len()];
    let mut nodes: Vec<Node> = Vec::new();
    let mut index: FastMap<(u32, u32, CpuKind), u32> = FastMap::default();
    let mut chain: Vec<u32> = Vec::new();
    for i in 0..cpu.len() {
        chain.clear();
        let mut c = u32::try_from(i).unwrap_or(NONE);
        let mut base = NONE;
        // A chain longer than the ranges would be a cycle, which nesting never makes.
        while chain.len() <= cpu.len() {
            match of_cpu.get(c as usize) {
                Some(&node) if node != UNSET => {
                    base = node;
                    break;
                }
                Some(_) => {
                    chain.push(c);
                    c = parents.get(c as usize).copied().unwrap_or(NONE);
                }
                None => break,
            }
        }
        for &e in chain.iter().rev() {
            let Some(event) = cpu.get(e as usize) else {
                continue;
            };
            if !see_through(trace, e as usize) {
                let key = (base, event.name, event.kind);
                base = match index.get(&key) {
                    Some(&node) => node,
                    None => {
                        let node = u32::try_from(nodes.len()).unwrap_or(NONE);
                        let depth = nodes.get(base as usize).map_or(1, |p| p.depth + 1);
                        nodes.push(Node {
                            parent: base,
                            name: event.name,
                            kind: event.kind,
                            depth,
                            first_start: event.start,
                        });
                        index.insert(key, node);
                        node
                    }
                };
                if let Some(node) = nodes.get_mut(base as usize) {
                    node.first_start = node.first_start.min(event.start);
                }
            }
            if let Some(slot) = of_cpu.get_mut(e as usize) {
                *slot = base;
            }
        }
    }
    Tree { nodes, of_cpu }
}

/// How a GPU event was launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Launch {
    /// By a kernel/memcpy/memset call of its own.
    Direct,
    /// As part of a CUDA graph replay (`cudaGraphLaunch`).
    Graph,
    /// No runtime call has its correlation id.
    Unlinked,
}

impl Launch {
    pub fn as_str(self) -> &'static str {
        match self {
            Launch::Direct => "direct",
            Launch::Graph => "graph_replay",
            Launch::Unlinked => "unlinked",
        }
    }
}

impl Tree {
    /// The path of runtime call `r`: the ranges enclosing it on its thread; for a call outside
    /// every range, the path of the `cpu_op` its External id names (as `links` links it).
    pub fn of_call(&self, trace: &Trace, r: usize) -> u32 {
        let links = &trace.links;
        let enclosing = links.runtime_parent.get(r).copied().unwrap_or(NONE);
        let node = self.of_cpu.get(enclosing as usize).copied().unwrap_or(NONE);
        if node != NONE {
            return node;
        }
        let op = links.runtime_op.get(r).copied().unwrap_or(NONE);
        self.of_cpu.get(op as usize).copied().unwrap_or(NONE)
    }

    /// The path and launch of GPU event `g`.
    pub fn of_gpu(&self, trace: &Trace, g: usize) -> (u32, Launch, u32) {
        let r = trace.links.gpu_runtime.get(g).copied().unwrap_or(NONE);
        let Some(call) = trace.events.runtime.get(r as usize) else {
            return (NONE, Launch::Unlinked, NONE);
        };
        let launch = if is_graph_launch(trace.name(call.name)) {
            Launch::Graph
        } else {
            Launch::Direct
        };
        (self.of_call(trace, r as usize), launch, call.name)
    }

    /// `node`'s ranges, outermost first.
    pub fn chain(&self, node: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut n = node;
        while let Some(node) = self.nodes.get(n as usize) {
            out.push(n);
            n = node.parent;
            if out.len() > self.nodes.len() {
                break;
            }
        }
        out.reverse();
        out
    }

    /// Nodes depth first, children in order of their first range's start (then name id).
    pub fn preorder(&self) -> Vec<u32> {
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); self.nodes.len()];
        let mut roots = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            let id = u32::try_from(i).unwrap_or(NONE);
            match children.get_mut(node.parent as usize) {
                Some(list) => list.push(id),
                None => roots.push(id),
            }
        }
        let key = |&id: &u32| {
            self.nodes
                .get(id as usize)
                .map(|n| (n.first_start, n.name, n.kind))
        };
        roots.sort_by_key(key);
        for list in &mut children {
            list.sort_by_key(key);
        }
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<u32> = roots.into_iter().rev().collect();
        while let Some(id) = stack.pop() {
            out.push(id);
            if let Some(list) = children.get(id as usize) {
                stack.extend(list.iter().rev());
            }
        }
        out
    }
}
