//! Launch facts: every GPU event with the runtime call that launched it and the latency between them.
//!
//! `latency_from_call_start_ns` = GPU start − call start; `latency_from_call_end_ns` = GPU start − call
//! end (negative when the GPU started before the call returned). Events with no linked call keep nulls.

use super::columns::{int, opt_float, opt_int, opt_text, text};
use super::distribution::{distribution, Distribution};
use super::fields;
use super::graphs::{is_graph_launch, launch_facts, GraphLaunch};
use super::records::{GpuKind, NONE};
use super::{Trace, TraceSet};
use crate::error::Result;
use crate::table::Table;
use serde::Serialize;

/// Launch latencies of one trace's kernels launched one by one: (from call start, from call end).
/// Kernels of CUDA-graph executions are measured apart (`graph`): a graph launch call starts the
/// whole graph, not each of its kernels.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LaunchLatency {
    /// Absent when every linked kernel belongs to a graph execution.
    pub from_call_start: Option<Distribution>,
    pub from_call_end: Option<Distribution>,
    /// Kernels of graph executions, left out of the two distributions above.
    pub graph_kernels: usize,
    pub graph: Option<GraphLaunch>,
}

pub fn latency(trace: &Trace) -> Option<LaunchLatency> {
    let (mut from_start, mut from_end) = (Vec::new(), Vec::new());
    let mut graph_kernels = 0usize;
    for (g, e) in trace.events.gpu.iter().enumerate() {
        if e.kind != GpuKind::Kernel {
            continue;
        }
        let call = trace
            .links
            .gpu_runtime
            .get(g)
            .and_then(|&r| trace.events.runtime.get(r as usize));
        if let Some(call) = call {
            if is_graph_launch(trace.name(call.name)) {
                graph_kernels += 1;
                continue;
            }
            from_start.push(e.start - call.start);
            from_end.push(e.start - call.end);
        }
    }
    let graph = launch_facts(trace);
    if from_start.is_empty() && graph.is_none() {
        return None;
    }
    Some(LaunchLatency {
        from_call_start: distribution(from_start),
        from_call_end: distribution(from_end),
        graph_kernels,
        graph,
    })
}

/// One row per GPU event (kernel, memcpy, memset) in start order: `rank, kind, name, device, stream,
/// start_ns, duration_ns, correlation, runtime_name, call_start_ns, call_duration_ns,
/// latency_from_call_start_ns, latency_from_call_end_ns, op_name, grid_x..z, block_x..z,
/// registers_per_thread, shared_memory_bytes, occupancy_pct, bytes`.
pub fn table(set: &TraceSet) -> Result<Table> {
    let mut ints: [Vec<i64>; 7] = Default::default();
    let mut opts: [Vec<Option<i64>>; 14] = Default::default();
    let (mut kind, mut name, mut runtime_name, mut op_name, mut occupancy) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for trace in &set.traces {
        let gpu = &trace.events.gpu;
        let mut order: Vec<usize> = (0..gpu.len()).collect();
        order.sort_by_key(|&g| gpu.get(g).map(|e| (e.start, e.end)));
        for g in order {
            let Some(e) = gpu.get(g) else { continue };
            let call = trace
                .links
                .gpu_runtime
                .get(g)
                .and_then(|&r| trace.events.runtime.get(r as usize));
            let op = trace.links.gpu_op(g);
            let config = trace.events.launch_configs.get(e.config as usize);
            kind.push(e.kind.as_str());
            name.push(trace.name(e.name).to_owned());
            runtime_name.push(call.map(|c| trace.name(c.name).to_owned()));
            op_name.push(
                (op != NONE)
                    .then(|| {
                        trace
                            .events
                            .cpu
                            .get(op as usize)
                            .map(|c| trace.name(c.name).to_owned())
                    })
                    .flatten(),
            );
            occupancy.push(config.map(|c| c.occupancy_pct).filter(|v| !v.is_nan()));
            let values = [
                trace.rank,
                e.device,
                e.stream,
                e.start - trace.origin(),
                e.end - e.start,
                e.correlation,
                0,
            ];
            for (col, v) in ints.iter_mut().zip(values) {
                col.push(v);
            }
            let known = |v: i64| (v >= 0).then_some(v);
            let dims = config.map_or([None; 6], |c| {
                let ([gx, gy, gz], [bx, by, bz]) = (c.grid, c.block);
                [gx, gy, gz, bx, by, bz].map(known)
            });
            let [gx, gy, gz, bx, by, bz] = dims;
            let optional = [
                call.map(|c| c.start - trace.origin()),
                call.map(|c| c.end - c.start),
                call.map(|c| e.start - c.start),
                call.map(|c| e.start - c.end),
                gx,
                gy,
                gz,
                bx,
                by,
                bz,
                config.and_then(|c| known(c.registers_per_thread)),
                config.and_then(|c| known(c.shared_memory_bytes)),
                known(e.bytes),
                known(e.correlation),
            ];
            for (col, v) in opts.iter_mut().zip(optional) {
                col.push(v);
            }
        }
    }
    let [rank, device, stream, start, duration, _, _] = ints;
    let [call_start, call_duration, from_start, from_end, grid_x, grid_y, grid_z, block_x, block_y, block_z, regs, smem, bytes, correlation] =
        opts;
    Table::declared(
        fields::LAUNCHES,
        vec![
            ("rank", int(rank)),
            ("kind", text(&kind)),
            ("name", text(&name)),
            ("device", int(device)),
            ("stream", int(stream)),
            ("start_ns", int(start)),
            ("duration_ns", int(duration)),
            ("correlation", opt_int(correlation)),
            ("runtime_name", opt_text(runtime_name)),
            ("call_start_ns", opt_int(call_start)),
            ("call_duration_ns", opt_int(call_duration)),
            ("latency_from_call_start_ns", opt_int(from_start)),
            ("latency_from_call_end_ns", opt_int(from_end)),
            ("op_name", opt_text(op_name)),
            ("grid_x", opt_int(grid_x)),
            ("grid_y", opt_int(grid_y)),
            ("grid_z", opt_int(grid_z)),
            ("block_x", opt_int(block_x)),
            ("block_y", opt_int(block_y)),
            ("block_z", opt_int(block_z)),
            ("registers_per_thread", opt_int(regs)),
            ("shared_memory_bytes", opt_int(smem)),
            ("occupancy_pct", opt_float(occupancy)),
            ("bytes", opt_int(bytes)),
        ],
    )
}
