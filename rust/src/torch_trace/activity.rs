//! One trace (rank) as the analyses' [`Activity`]: GPU events (kernels, memcpys, memsets) with the
//! runtime or driver call that launched each (the correlation link, `links.rs`), the calls of
//! synchronizing APIs, and the `user_annotation` ranges (`record_function`, `ProfilerStep#N`).
//!
//! Times are relative to the trace's origin, as in every torch table. Kineto traces one process per
//! rank: every thread and stream belongs to one process here, so a synchronizing call may wait for
//! any stream of the trace. Threads are `pid/tid` as the trace spells them.

use super::records::{CpuKind, GpuKind, NONE as EVENT_NONE};
use super::Trace;
use crate::analyses::activity::{
    Activity, Builder, CallKind, GpuOp, HostCall, Lane, Marker, OpClass, NONE,
};
use crate::error::Result;

/// The synchronizing runtime and driver APIs (as the nsys engine lists them, without version).
const SYNC_APIS: &[&str] = &[
    "cudaDeviceSynchronize",
    "cudaThreadSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "cuEventSynchronize",
    "hipDeviceSynchronize",
    "hipStreamSynchronize",
    "hipEventSynchronize",
];

pub fn load(trace: &Trace) -> Result<Activity> {
    let ev = &trace.events;
    let origin = trace.origin();
    let mut b = Builder::new("record_function");
    let process = b.process("trace")?;
    let thread_of = |b: &mut Builder, t: u32| -> Result<u32> {
        let label = ev
            .threads
            .get(t as usize)
            .map_or_else(|| "?".to_string(), |t| format!("{}/{}", t.pid, t.tid));
        b.thread(process, &label)
    };
    // Calls that launched GPU work, or synchronize.
    let mut call_of = vec![NONE; ev.runtime.len()];
    for (r, call) in ev.runtime.iter().enumerate() {
        let name = trace.name(call.name);
        let launches = !trace.links.gpu_of_runtime(r).is_empty();
        let kind = if SYNC_APIS.contains(&name) {
            CallKind::Sync
        } else if launches {
            CallKind::Launch
        } else {
            continue;
        };
        let thread = thread_of(&mut b, call.thread)?;
        let name = b.name(name)?;
        let c = b.call(HostCall {
            start: call.start - origin,
            end: call.end - origin,
            thread,
            name,
            kind,
        })?;
        if let Some(slot) = call_of.get_mut(r) {
            *slot = c;
        }
    }
    b.reserve_ops(ev.gpu.len());
    for (g, e) in ev.gpu.iter().enumerate() {
        let call = trace
            .links
            .gpu_runtime
            .get(g)
            .copied()
            .filter(|&r| r != EVENT_NONE)
            .and_then(|r| call_of.get(r as usize).copied())
            .unwrap_or(NONE);
        let lane = b.lane(Lane {
            device: e.device,
            stream: e.stream,
            process,
        })?;
        let name = b.name(trace.name(e.name))?;
        b.op(GpuOp {
            start: e.start - origin,
            end: e.end - origin,
            lane,
            name,
            call,
            class: match e.kind {
                GpuKind::Kernel => OpClass::Kernel,
                GpuKind::Memcpy => OpClass::Memcpy,
                GpuKind::Memset => OpClass::Memset,
            },
        })?;
    }
    for c in ev.cpu.iter().filter(|c| c.kind == CpuKind::Annotation) {
        let thread = thread_of(&mut b, c.thread)?;
        let name = b.name(trace.name(c.name))?;
        b.range(Marker {
            name,
            start: c.start - origin,
            end: c.end - origin,
            thread,
        });
    }
    Ok(b.finish())
}
