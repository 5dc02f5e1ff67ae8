//! An nsys export as a Perfetto trace (`gpuopt nsys export perfetto`): each GPU stream (kernels,
//! memcpys, memsets, graph executions of a graph-level trace), each host thread (the CUDA API calls
//! that launched GPU work, with a flow to the first operation they launched, and NVTX ranges; every
//! API call with `all_api`), and gpuopt's facts: idle gaps per device and per stream (the rule of
//! `gpuopt nsys gaps`), CUDA graph executions, the occurrences of keys a profile diff flagged, and
//! the caller's fact tracks. Times are the export's own ns (nsys counts from the session start).

use super::api::strip_version;
use super::graphs;
use super::info;
use super::memory::enum_labels;
use super::ops::{self, Call, Op, OpKind};
use super::ranges;
use super::scan;
use super::schema::{ENUM_MEMCPY_OPER, PID_MASK, RUNTIME};
use super::select::{Request, Selection};
use super::timeline::GPU_WORK;
use super::Report;
use crate::error::Result;
use crate::perfetto::lanes::{Lanes, Slice};
use crate::perfetto::writer::{Kind, Value, Writer, Written};
use crate::perfetto::{write_file, Options};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::Path;

/// `(pid, tid)` of a `globalTid` (nsys packs them as `... pid:24 tid:24`).
fn pid_tid(global_tid: i64) -> (i64, i64) {
    ((global_tid >> 24) & 0x00ff_ffff, global_tid & 0x00ff_ffff)
}

fn flow(global_pid: i64, correlation: i64) -> u64 {
    #[allow(clippy::cast_sign_loss)]
    let (p, c) = ((global_pid & PID_MASK) as u64, correlation as u64);
    (p ^ (c & 0x00ff_ffff_ffff)) | (1 << 63)
}

/// A host slice of one thread: an API call or an NVTX range (`name` indexes [`Labels`]).
struct Host {
    start: i64,
    end: i64,
    name: u32,
    flow: Option<u64>,
    nvtx: bool,
}

/// The distinct names of host slices.
#[derive(Default)]
struct Labels {
    index: HashMap<String, u32>,
    values: Vec<String>,
}

impl Labels {
    fn id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = u32::try_from(self.values.len()).unwrap_or(u32::MAX);
        self.values.push(name.to_owned());
        self.index.insert(name.to_owned(), i);
        i
    }

    fn get(&self, i: u32) -> &str {
        self.values.get(i as usize).map_or("", String::as_str)
    }
}

struct Names<'a> {
    report: &'a Report,
    opers: BTreeMap<i64, String>,
}

impl Names<'_> {
    fn of(&self, op: &Op) -> String {
        match op.kind {
            OpKind::Kernel => self
                .report
                .strings
                .value(u32::try_from(op.name).unwrap_or(u32::MAX))
                .to_string(),
            OpKind::Memcpy => format!(
                "[CUDA memcpy {}]",
                self.opers.get(&op.name).map_or("Unknown", String::as_str)
            ),
            OpKind::Memset => "[CUDA memset]".to_string(),
            OpKind::Graph => format!("[CUDA graph {} exec {}]", op.name, op.graph),
        }
    }
}

/// The API calls that launched the operations, each once, keyed by thread, with a flow to the
/// first operation it launched.
fn launch_calls(
    ops: &[Op],
    calls: &[Option<Call>],
    report: &Report,
    labels: &mut Labels,
) -> BTreeMap<i64, Vec<Host>> {
    let mut seen: HashSet<(i64, i64)> = HashSet::new();
    let mut out: BTreeMap<i64, Vec<Host>> = BTreeMap::new();
    for (op, call) in ops.iter().zip(calls) {
        let Some(call) = call else { continue };
        if !seen.insert((op.global_pid & PID_MASK, op.correlation)) {
            continue;
        }
        out.entry(call.global_tid).or_default().push(Host {
            start: call.start,
            end: call.end,
            name: labels.id(strip_version(report.strings.value(call.name))),
            flow: Some(flow(op.global_pid, op.correlation)),
            nvtx: false,
        });
    }
    out
}

/// Every API call (`--api all`): one scan of the runtime table; calls that launched operations
/// keep their flows.
fn all_calls(
    report: &Report,
    sel: &Selection,
    launched: &HashSet<(i64, i64)>,
    labels: &mut Labels,
    out: &mut BTreeMap<i64, Vec<Host>>,
) -> Result<()> {
    let Some(table) = report.schema.table(&RUNTIME) else {
        return Ok(());
    };
    let parts = scan::scan(
        &report.schema,
        table,
        &["start", "end", "globalTid", "nameId", "correlationId"],
        Vec::new,
        |acc: &mut Vec<(i64, i64, i64, u32, i64)>, row| {
            let (start, end) = row.interval(0, 1)?;
            let tid = row.opt_int(2)?.unwrap_or(0);
            let name = report
                .strings
                .resolve(row.int(3)?, &table.actual, "nameId")?;
            acc.push((start, end, tid, name, row.opt_int(4)?.unwrap_or(-1)));
            Ok(())
        },
    )?;
    for (start, end, tid, name, corr) in parts.into_iter().flatten() {
        if launched.contains(&(tid & PID_MASK, corr)) || !sel.keep_cpu(start, end, tid) {
            continue;
        }
        out.entry(tid).or_default().push(Host {
            start,
            end,
            name: labels.id(strip_version(report.strings.value(name))),
            flow: None,
            nvtx: false,
        });
    }
    Ok(())
}

/// The NVTX ranges the selection keeps (`--window`, the device's processes, `--nvtx`), as the other
/// host tracks.
fn add_nvtx(
    report: &Report,
    sel: &Selection,
    labels: &mut Labels,
    out: &mut BTreeMap<i64, Vec<Host>>,
) -> Result<Vec<(i64, i64, String)>> {
    let data = ranges::load(&report.schema, &report.strings)?;
    let mut all = Vec::new();
    for r in &data.ranges {
        let end = data.close_for_sum(r.end());
        if !sel.keep_cpu(r.start, end, r.tid) {
            continue;
        }
        let text = data.text(r);
        let tag = data.tag(r);
        out.entry(r.tid).or_default().push(Host {
            start: r.start,
            end,
            name: labels.id(if tag.is_empty() { text } else { tag }),
            flow: None,
            nvtx: true,
        });
        all.push((r.start, end, text.to_string()));
        if !tag.is_empty() && tag != text {
            all.push((r.start, end, tag.to_string()));
        }
    }
    Ok(all)
}

fn write_threads<W: Write>(
    w: &mut Writer<W>,
    threads: BTreeMap<i64, Vec<Host>>,
    labels: &Labels,
) -> Result<()> {
    let mut processes: BTreeMap<i64, u64> = BTreeMap::new();
    for (global_tid, mut list) in threads {
        let (pid, tid) = pid_tid(global_tid);
        let process = match processes.get(&pid) {
            Some(&p) => p,
            None => {
                let p = w.track(None, &format!("process {pid}"), Kind::Process { pid })?;
                processes.insert(pid, p);
                p
            }
        };
        // NVTX ranges before the calls they enclose when both start together.
        list.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end), !h.nvtx));
        let mut lanes = Lanes::new(
            format!("thread {tid}"),
            Some(process),
            Kind::Thread { pid, tid },
        );
        for h in &list {
            let flows: Vec<u64> = h.flow.into_iter().collect();
            lanes.slice(
                w,
                &Slice {
                    start: h.start,
                    end: h.end,
                    name: labels.get(h.name),
                    args: &[],
                    flows: &flows,
                    ends: &[],
                },
            )?;
        }
        lanes.close(w)?;
    }
    Ok(())
}

fn write_streams<W: Write>(
    w: &mut Writer<W>,
    ops: &[Op],
    calls: &[Option<Call>],
    names: &Names<'_>,
    gpu_names: &HashMap<i64, String>,
) -> Result<BTreeMap<i64, u64>> {
    let mut by_stream: BTreeMap<(i64, i64), Vec<usize>> = BTreeMap::new();
    for (i, op) in ops.iter().enumerate() {
        by_stream.entry((op.device, op.stream)).or_default().push(i);
    }
    let mut devices: BTreeMap<i64, u64> = BTreeMap::new();
    let mut terminated: HashSet<(i64, i64)> = HashSet::new();
    for ((device, stream), list) in by_stream {
        let parent = match devices.get(&device) {
            Some(&p) => p,
            None => {
                let label = match gpu_names.get(&device) {
                    Some(n) => format!("GPU {device} ({n})"),
                    None => format!("GPU {device}"),
                };
                let p = w.track(None, &label, Kind::Plain)?;
                devices.insert(device, p);
                p
            }
        };
        // `ops` is sorted by (start, end): within a stream, longer first at equal starts.
        let mut sorted = list;
        sorted.sort_by_key(|&i| ops.get(i).map(|o| (o.start, std::cmp::Reverse(o.end))));
        let mut lanes = Lanes::new(format!("stream {stream}"), Some(parent), Kind::Plain);
        for i in sorted {
            let Some(op) = ops.get(i) else { continue };
            let key = (op.global_pid & PID_MASK, op.correlation);
            let launched = calls.get(i).is_some_and(Option::is_some);
            let ends: Vec<u64> = if launched && terminated.insert(key) {
                vec![flow(op.global_pid, op.correlation)]
            } else {
                Vec::new()
            };
            let mut args = vec![
                ("kind", Value::Text(op.kind.as_str())),
                ("correlation", Value::Int(op.correlation)),
            ];
            if op.kind != OpKind::Kernel && op.kind != OpKind::Graph {
                args.push(("bytes", Value::Int(op.bytes)));
            }
            let name = names.of(op);
            lanes.slice(
                w,
                &Slice {
                    start: op.start,
                    end: op.end,
                    name: &name,
                    args: &args,
                    flows: &[],
                    ends: &ends,
                },
            )?;
        }
        lanes.close(w)?;
    }
    Ok(devices)
}

/// Idle gaps per device and per stream: between the end of the work so far and the next
/// operation's start (the rule of `gpuopt nsys gaps`, over the whole export).
fn write_gaps<W: Write>(
    w: &mut Writer<W>,
    ops: &[Op],
    names: &Names<'_>,
    facts: u64,
) -> Result<()> {
    let mut lanes: BTreeMap<(i64, Option<i64>), (Lanes, i64, usize)> = BTreeMap::new();
    for (i, op) in ops.iter().enumerate() {
        for key in [(op.device, None), (op.device, Some(op.stream))] {
            match lanes.get_mut(&key) {
                Some((track, end, before)) => {
                    if op.start > *end {
                        let (b, a) = (
                            ops.get(*before).map(|o| names.of(o)).unwrap_or_default(),
                            names.of(op),
                        );
                        let args = [
                            ("duration_ns", Value::Int(op.start - *end)),
                            ("before", Value::Text(&b)),
                            ("after", Value::Text(&a)),
                        ];
                        track.slice(
                            w,
                            &Slice {
                                start: *end,
                                end: op.start,
                                name: "idle",
                                args: &args,
                                flows: &[],
                                ends: &[],
                            },
                        )?;
                    }
                    if op.end > *end {
                        *end = op.end;
                        *before = i;
                    }
                }
                None => {
                    let name = match key.1 {
                        None => format!("idle gaps · GPU {}", key.0),
                        Some(s) => format!("idle gaps · GPU {} stream {s}", key.0),
                    };
                    lanes.insert(key, (Lanes::new(name, Some(facts), Kind::Plain), op.end, i));
                }
            }
        }
    }
    for (track, _, _) in lanes.values_mut() {
        track.close(w)?;
    }
    Ok(())
}

fn write_graphs<W: Write>(
    w: &mut Writer<W>,
    report: &Report,
    ops: &[Op],
    calls: &[Option<Call>],
    facts: u64,
) -> Result<()> {
    let ex = graphs::executions(&report.strings, ops, calls);
    if ex.list.is_empty() {
        return Ok(());
    }
    let mut lanes = Lanes::new(
        format!("CUDA graph executions ({})", ex.mode),
        Some(facts),
        Kind::Plain,
    );
    for e in &ex.list {
        let name = match (e.graph_id, e.graph_exec_id) {
            (Some(g), Some(x)) => format!("graph {g} exec {x}"),
            _ => format!("graph launch {}", e.correlation),
        };
        let mut args = vec![
            ("device", Value::Int(e.device)),
            ("stream", Value::Int(e.stream)),
        ];
        if let Some(k) = &e.kernels {
            args.push((
                "kernels",
                Value::Int(i64::try_from(k.len()).unwrap_or(i64::MAX)),
            ));
        }
        if let Some(c) = &e.call {
            args.push(("launch_latency_ns", Value::Int(e.start - c.start)));
        }
        lanes.slice(
            w,
            &Slice {
                start: e.start,
                end: e.end,
                name: &name,
                args: &args,
                flows: &[],
                ends: &[],
            },
        )?;
    }
    lanes.close(w)
}

fn write_flagged<W: Write>(
    w: &mut Writer<W>,
    opts: &Options,
    ops: &[Op],
    names: &Names<'_>,
    nvtx: &[(i64, i64, String)],
) -> Result<()> {
    let Some(f) = &opts.flagged else {
        return Ok(());
    };
    let mut hits: Vec<(i64, i64, String, Option<f64>)> = Vec::new();
    match f.by.as_str() {
        "kernel" | "memcpy" => {
            for op in ops {
                let wanted = if f.by == "kernel" {
                    matches!(op.kind, OpKind::Kernel | OpKind::Graph)
                } else {
                    matches!(op.kind, OpKind::Memcpy | OpKind::Memset)
                };
                if !wanted {
                    continue;
                }
                let name = names.of(op);
                if let Some(change) = f.change(&name) {
                    hits.push((op.start, op.end, name, change));
                }
            }
        }
        "nvtx" => {
            for (start, end, text) in nvtx {
                if let Some(change) = f.change(text) {
                    hits.push((*start, *end, text.clone(), change));
                }
            }
        }
        _ => {}
    }
    hits.sort_by_key(|a| (a.0, std::cmp::Reverse(a.1)));
    hits.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1 && a.2 == b.2);
    let mut lanes = Lanes::new(
        format!("profile diff: flagged {}s", f.by),
        None,
        Kind::Plain,
    );
    lanes.first(w)?;
    for (start, end, name, change) in &hits {
        let args = match change {
            Some(c) => [("change_pct", Value::Float(*c))],
            None => [("change_pct", Value::Text("null (baseline 0)"))],
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

/// Writes the Perfetto trace of an nsys export to `out` (`all_api`: every CUDA API call, not only
/// those that launched GPU work).
pub fn export(
    report: &Report,
    req: &Request,
    out: &Path,
    opts: &Options,
    all_api: bool,
) -> Result<Written> {
    let sel = report.selection(req)?;
    let (schema, strings) = (&report.schema, &report.strings);
    let ops = ops::load(schema, strings, &sel, GPU_WORK)?;
    let calls = ops::join_calls(
        schema,
        strings,
        ops.iter().map(|o| (o.global_pid, o.correlation)),
    )?;
    let names = Names {
        report,
        opers: enum_labels(schema, &ENUM_MEMCPY_OPER)?,
    };
    let gpu_names: HashMap<i64, String> = info::gpu_list(schema)?
        .into_iter()
        .filter_map(|g| Some((g.id?, g.name?)))
        .collect();
    let mut labels = Labels::default();
    let mut threads = launch_calls(&ops, &calls, report, &mut labels);
    if all_api {
        let launched: HashSet<(i64, i64)> = ops
            .iter()
            .zip(&calls)
            .filter(|(_, c)| c.is_some())
            .map(|(o, _)| (o.global_pid & PID_MASK, o.correlation))
            .collect();
        all_calls(report, &sel, &launched, &mut labels, &mut threads)?;
    }
    let nvtx = add_nvtx(report, &sel, &mut labels, &mut threads)?;
    write_file(out, |w| {
        write_threads(w, threads, &labels)?;
        write_streams(w, &ops, &calls, &names, &gpu_names)?;
        let facts = w.track(None, "gpuopt facts", Kind::Plain)?;
        write_gaps(w, &ops, &names, facts)?;
        write_graphs(w, report, &ops, &calls, facts)?;
        write_flagged(w, opts, &ops, &names, &nvtx)?;
        crate::perfetto::write_extra(w, &opts.extra)
    })
}
