//! A Kineto trace as a Perfetto trace (`gpuopt torch export perfetto`): per rank, each host thread
//! (ops, `record_function` ranges, runtime calls, nested) and each GPU stream (kernels, memcpys,
//! memsets), linked by flows from the launching call to its first GPU event; and gpuopt's facts as
//! tracks of their own: idle gaps by cause per stream, CUDA graph executions, the occurrences of keys
//! a profile diff flagged, and any fact tracks the caller adds. Times are ns from the file's origin.

use super::graphs;
use super::records::{CpuKind, OwnedIdent, NONE};
use super::timeline::stream_gaps;
use super::{Trace, TraceSet};
use crate::error::Result;
use crate::fxhash::FxHashSet;
use crate::perfetto::lanes::{Lanes, Slice};
use crate::perfetto::writer::{Kind, Value, Writer, Written};
use crate::perfetto::{write_file, Options};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// A process id as Perfetto takes it: Kineto's integer pid, or a stable number for a named one.
fn pid_number(id: &OwnedIdent) -> i64 {
    match id {
        OwnedIdent::Int(v) => *v,
        OwnedIdent::Str(s) => {
            let h = s.bytes().fold(0xcbf2_9ce4_u32, |h, b| {
                (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
            });
            i64::from(h & 0x7fff_ffff)
        }
    }
}

/// A flow id per (rank, correlation): never 0, distinct across ranks.
fn flow(rank: i64, correlation: i64) -> u64 {
    #[allow(clippy::cast_sign_loss)]
    let (r, c) = (rank as u64, correlation as u64);
    (r.wrapping_add(1) << 44) ^ (c & ((1 << 44) - 1)) ^ (1 << 63)
}

/// A host range or call on a thread, in the order slices must be placed.
struct Host {
    start: i64,
    end: i64,
    order: u8,
    name: u32,
    call: u32,
}

fn host_slices(trace: &Trace) -> BTreeMap<u32, Vec<Host>> {
    let mut out: BTreeMap<u32, Vec<Host>> = BTreeMap::new();
    for c in &trace.events.cpu {
        let order = match c.kind {
            CpuKind::Annotation => 0,
            CpuKind::Op => 1,
            CpuKind::Python => 2,
        };
        out.entry(c.thread).or_default().push(Host {
            start: c.start,
            end: c.end,
            order,
            name: c.name,
            call: NONE,
        });
    }
    for (r, call) in trace.events.runtime.iter().enumerate() {
        out.entry(call.thread).or_default().push(Host {
            start: call.start,
            end: call.end,
            order: if call.driver { 4 } else { 3 },
            name: call.name,
            call: u32::try_from(r).unwrap_or(NONE),
        });
    }
    for list in out.values_mut() {
        list.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end), h.order));
    }
    out
}

fn write_threads<W: Write>(w: &mut Writer<W>, trace: &Trace) -> Result<()> {
    let origin = trace.origin();
    let mut processes: BTreeMap<i64, u64> = BTreeMap::new();
    for (thread, list) in host_slices(trace) {
        let Some(t) = trace.events.threads.get(thread as usize) else {
            continue;
        };
        let pid = pid_number(&t.pid);
        let tid = match &t.tid {
            OwnedIdent::Int(v) => *v,
            other => pid_number(other),
        };
        let process = match processes.get(&pid) {
            Some(&p) => p,
            None => {
                let p = w.track(
                    None,
                    &format!("rank {} · process {}", trace.rank, t.pid),
                    Kind::Process { pid },
                )?;
                processes.insert(pid, p);
                p
            }
        };
        let name = trace
            .events
            .thread_names
            .get(&thread)
            .cloned()
            .unwrap_or_else(|| format!("thread {}", t.tid));
        let mut lanes = Lanes::new(name, Some(process), Kind::Thread { pid, tid });
        for h in list {
            let call = trace.events.runtime.get(h.call as usize);
            let launched =
                call.is_some_and(|_| !trace.links.gpu_of_runtime(h.call as usize).is_empty());
            let flows: Vec<u64> = match call {
                Some(c) if launched && c.correlation >= 0 => vec![flow(trace.rank, c.correlation)],
                _ => Vec::new(),
            };
            let args: Vec<(&'static str, Value<'_>)> = match call {
                Some(c) if c.correlation >= 0 => vec![("correlation", Value::Int(c.correlation))],
                _ => Vec::new(),
            };
            lanes.slice(
                w,
                &Slice {
                    start: h.start - origin,
                    end: h.end - origin,
                    name: trace.name(h.name),
                    args: &args,
                    flows: &flows,
                    ends: &[],
                },
            )?;
        }
        lanes.close(w)?;
    }
    Ok(())
}

fn device_label(trace: &Trace, device: i64) -> String {
    let name = trace
        .header
        .devices
        .iter()
        .find(|d| d.id == Some(device))
        .and_then(|d| d.name.clone());
    match name {
        Some(n) => format!("rank {} · GPU {device} ({n})", trace.rank),
        None => format!("rank {} · GPU {device}", trace.rank),
    }
}

fn write_streams<W: Write>(
    w: &mut Writer<W>,
    trace: &Trace,
    opts: &Options,
) -> Result<BTreeMap<i64, u64>> {
    let origin = trace.origin();
    let mut by_stream: BTreeMap<(i64, i64), Vec<usize>> = BTreeMap::new();
    for (g, e) in trace.events.gpu.iter().enumerate() {
        by_stream.entry((e.device, e.stream)).or_default().push(g);
    }
    let mut devices: BTreeMap<i64, u64> = BTreeMap::new();
    let mut terminated: FxHashSet<i64> = FxHashSet::default();
    let flag_kernels = opts
        .flagged
        .as_ref()
        .filter(|f| f.by == "kernel" || f.by == "memcpy");
    let mut flagged: Vec<(i64, i64, String, Option<f64>)> = Vec::new();
    for ((device, stream), mut list) in by_stream {
        let parent = match devices.get(&device) {
            Some(&p) => p,
            None => {
                let p = w.track(None, &device_label(trace, device), Kind::Plain)?;
                devices.insert(device, p);
                p
            }
        };
        list.sort_by_key(|&g| {
            trace
                .events
                .gpu
                .get(g)
                .map(|e| (e.start, std::cmp::Reverse(e.end)))
        });
        let mut lanes = Lanes::new(format!("stream {stream}"), Some(parent), Kind::Plain);
        for g in list {
            let Some(e) = trace.events.gpu.get(g) else {
                continue;
            };
            let linked = trace.links.gpu_runtime.get(g).is_some_and(|&r| r != NONE);
            let ends: Vec<u64> = if linked && e.correlation >= 0 && terminated.insert(e.correlation)
            {
                vec![flow(trace.rank, e.correlation)]
            } else {
                Vec::new()
            };
            let mut args: Vec<(&'static str, Value<'_>)> =
                vec![("kind", Value::Text(e.kind.as_str()))];
            if e.correlation >= 0 {
                args.push(("correlation", Value::Int(e.correlation)));
            }
            if e.bytes >= 0 {
                args.push(("bytes", Value::Int(e.bytes)));
            }
            let name = trace.name(e.name);
            if let Some(f) = flag_kernels {
                let kind_matches =
                    (f.by == "kernel") == (e.kind == super::records::GpuKind::Kernel);
                if let (true, Some(change)) = (kind_matches, f.change(name)) {
                    flagged.push((e.start - origin, e.end - origin, name.to_owned(), change));
                }
            }
            lanes.slice(
                w,
                &Slice {
                    start: e.start - origin,
                    end: e.end - origin,
                    name,
                    args: &args,
                    flows: &[],
                    ends: &ends,
                },
            )?;
        }
        lanes.close(w)?;
    }
    if let Some(f) = &opts.flagged {
        flagged.extend(flagged_host(trace, f));
        write_flagged(w, trace.rank, &f.by, flagged)?;
    }
    Ok(devices)
}

/// Host ranges whose names a diff by `op` or `nvtx` flagged.
fn flagged_host(
    trace: &Trace,
    f: &crate::perfetto::Flagged,
) -> Vec<(i64, i64, String, Option<f64>)> {
    let origin = trace.origin();
    let kind = match f.by.as_str() {
        "op" => CpuKind::Op,
        "nvtx" => CpuKind::Annotation,
        _ => return Vec::new(),
    };
    trace
        .events
        .cpu
        .iter()
        .filter(|c| c.kind == kind)
        .filter_map(|c| {
            let name = trace.name(c.name);
            // The diff's nvtx keys write ProfilerStep#N as ProfilerStep#*.
            let key = if name.starts_with("ProfilerStep#") {
                "ProfilerStep#*"
            } else {
                name
            };
            f.change(key)
                .map(|change| (c.start - origin, c.end - origin, name.to_owned(), change))
        })
        .collect()
}

fn write_flagged<W: Write>(
    w: &mut Writer<W>,
    rank: i64,
    by: &str,
    mut list: Vec<(i64, i64, String, Option<f64>)>,
) -> Result<()> {
    list.sort_by_key(|a| (a.0, std::cmp::Reverse(a.1)));
    let mut lanes = Lanes::new(
        format!("rank {rank} · profile diff: flagged {by}s"),
        None,
        Kind::Plain,
    );
    lanes.first(w)?;
    for (start, end, name, change) in &list {
        let args: Vec<(&'static str, Value<'_>)> = match change {
            Some(c) => vec![("change_pct", Value::Float(*c))],
            None => vec![("change_pct", Value::Text("null (baseline 0)"))],
        };
        lanes.slice(
            w,
            &Slice {
                start: *start,
                end: *end,
                name,
                args: &args,
                flows: &[],
                ends: &[],
            },
        )?;
    }
    lanes.close(w)
}

fn write_facts<W: Write>(w: &mut Writer<W>, trace: &Trace, opts: &Options) -> Result<()> {
    let origin = trace.origin();
    let facts = w.track(
        None,
        &format!("rank {} · gpuopt facts", trace.rank),
        Kind::Plain,
    )?;
    let mut gaps: BTreeMap<(i64, i64), Lanes> = BTreeMap::new();
    for ((device, stream), gap, next, cause) in stream_gaps(trace, opts.kernel_wait_threshold_ns) {
        let lanes = gaps.entry((device, stream)).or_insert_with(|| {
            Lanes::new(
                format!("idle gaps · GPU {device} stream {stream}"),
                Some(facts),
                Kind::Plain,
            )
        });
        let next_name = trace
            .events
            .gpu
            .get(next as usize)
            .map_or("", |e| trace.name(e.name));
        let args = [
            ("duration_ns", Value::Int(gap.end - gap.start)),
            ("next", Value::Text(next_name)),
        ];
        lanes.slice(
            w,
            &Slice {
                start: gap.start - origin,
                end: gap.end - origin,
                name: cause.as_str(),
                args: &args,
                flows: &[],
                ends: &[],
            },
        )?;
    }
    for lanes in gaps.values_mut() {
        lanes.close(w)?;
    }
    let executions = graphs::executions(trace);
    if !executions.is_empty() {
        let mut lanes = Lanes::new("CUDA graph executions", Some(facts), Kind::Plain);
        for e in &executions {
            let key = format!("graph {:016x}", e.key);
            let kernels = i64::try_from(e.kernels.len()).unwrap_or(i64::MAX);
            let args = [
                ("device", Value::Int(e.device)),
                ("kernels", Value::Int(kernels)),
                ("launch_latency_ns", Value::Int(e.start - e.call_start)),
            ];
            lanes.slice(
                w,
                &Slice {
                    start: e.start - origin,
                    end: e.end - origin,
                    name: &key,
                    args: &args,
                    flows: &[],
                    ends: &[],
                },
            )?;
        }
        lanes.close(w)?;
    }
    Ok(())
}

/// Writes the Perfetto trace of `set` to `out`.
pub fn export(set: &TraceSet, out: &Path, opts: &Options) -> Result<Written> {
    write_file(out, |w| {
        for trace in &set.traces {
            write_threads(w, trace)?;
            write_streams(w, trace, opts)?;
            write_facts(w, trace, opts)?;
        }
        crate::perfetto::write_extra(w, &opts.extra)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_are_nonzero_and_rank_distinct() {
        assert_ne!(flow(0, 0), 0);
        assert_ne!(flow(0, 5), flow(1, 5));
        assert_eq!(pid_number(&OwnedIdent::Int(42)), 42);
        assert!(pid_number(&OwnedIdent::Str("Spans".into())) >= 0);
    }
}
