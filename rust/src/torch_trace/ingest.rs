//! Adding one event read to the event model (`events`): its phase and category decide which
//! records it joins, what is counted, and what is left unmodeled; an event the model cannot take
//! is an error that names it.

use super::codes;
use super::events::Events;
use super::interned::Intern;
use super::raw::{Ident, Num, Problem, RawEvent};
use super::records::{
    CommArgs, CpuEvent, CpuKind, FlowPoint, GpuAnnotation, GpuEvent, GpuKind, LaunchConfig,
    OwnedIdent, RuntimeEvent, SyncEvent, NONE,
};
use crate::error::{Error, Result};
use std::borrow::Cow;

fn count_bits(mut bits: u64, counts: &mut Vec<u64>) {
    if bits != 0 && counts.len() < 64 {
        counts.resize(64, 0);
    }
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        if let Some(count) = counts.get_mut(i) {
            *count += 1;
        }
        bits &= bits - 1;
    }
}

const FLOW_CATEGORIES: [&str; 3] = ["ac2g", "async", "async_cpu_to_gpu"];

impl<S> Events<S> {
    /// Adds one event (number `index` in the file); the error names the event.
    pub fn push<'a>(&mut self, index: u64, ev: &RawEvent<'a>) -> Result<()>
    where
        S: Intern<'a>,
    {
        self.counts.events += 1;
        if let Some(problem) = &ev.problem {
            return Err(problem_error(index, problem));
        }
        self.note_unmodeled_fields(ev);
        match ev.ph.as_deref() {
            Some("X") => self.push_complete(index, ev),
            Some("M") => {
                self.counts.metadata += 1;
                self.push_metadata(ev);
                Ok(())
            }
            Some(phase @ ("s" | "f" | "t")) => {
                self.counts.flows += 1;
                let cat = ev.cat.as_deref().unwrap_or("");
                let (Some(Ident::Int(id)), Some(ts)) = (&ev.id, ev.ts) else {
                    self.count_unmodeled("flow", cat);
                    return Ok(());
                };
                if FLOW_CATEGORIES.contains(&cat) {
                    self.flows.push(FlowPoint {
                        id: *id,
                        ts,
                        start: phase == "s",
                    });
                } else {
                    self.count_unmodeled("flow", cat);
                }
                Ok(())
            }
            Some(phase @ ("i" | "I")) => {
                self.counts.instant += 1;
                let cat = ev.cat.as_deref().unwrap_or(phase);
                self.count_unmodeled("instant_event", cat);
                Ok(())
            }
            Some(phase) => {
                self.count_unmodeled("event_phase", phase);
                Ok(())
            }
            None => Err(event_error(index, "an event has no `ph` (phase)")
                .with_expected("a string `ph` on every event")),
        }
    }

    fn note_unmodeled_fields(&mut self, ev: &RawEvent<'_>) {
        let unmodeled = &mut self.unmodeled;
        count_bits(ev.unused_fields.into(), &mut unmodeled.unused_fields);
        count_bits(ev.args.unused, &mut unmodeled.unused_args);
        for name in &ev.unknown_fields {
            unmodeled.count("event_field", name);
        }
        for name in &ev.args.unknown {
            unmodeled.count("event_arg", name);
        }
    }

    fn push_metadata(&mut self, ev: &RawEvent<'_>) {
        let name = ev.name.as_deref().unwrap_or("");
        let meta = ev.args.meta.as_deref();
        let value = meta.and_then(|m| m.name.as_deref());
        match (name, &ev.pid) {
            ("thread_name", Some(pid)) => {
                if let (Some(tid), Some(value)) = (&ev.tid, value) {
                    let thread = self.thread(pid, tid);
                    self.thread_names.insert(thread, value.trim().to_owned());
                }
            }
            ("process_labels", Some(pid)) => {
                if let Some(labels) = meta.and_then(|m| m.labels.as_deref()) {
                    self.process_labels
                        .insert(OwnedIdent::from_ident(pid), labels.to_owned());
                }
            }
            ("process_name", _) => {}
            (other, _) => self.count_unmodeled("metadata", other),
        }
    }

    fn push_complete<'a>(&mut self, index: u64, ev: &RawEvent<'a>) -> Result<()>
    where
        S: Intern<'a>,
    {
        self.counts.complete += 1;
        let (Some(start), Some(dur)) = (ev.ts, ev.dur) else {
            return Err(
                event_error(index, "a complete (`X`) event lacks `ts` or `dur`")
                    .with_expected("numeric `ts` and `dur` in microseconds on every `X` event"),
            );
        };
        if dur < 0 {
            return Err(Error::input(
                codes::NEGATIVE_DURATION,
                format!("event {index} has a negative duration ({dur} ns)"),
            )
            .with_expected("dur >= 0")
            .with_observed(format!("dur = {dur} ns")));
        }
        let end = start.checked_add(dur).ok_or_else(|| {
            Error::input(
                codes::TIMESTAMP_INVALID,
                format!("event {index}: ts + dur overflows the nanosecond range"),
            )
        })?;
        let cat = ev.cat.as_deref().unwrap_or("");
        let kept = match cat {
            "cpu_op" | "Operator" | "user_annotation" | "python_function" => {
                self.push_cpu(index, ev, cat, start, end)?;
                true
            }
            "cuda_runtime" | "cuda_driver" | "Runtime" => {
                self.push_runtime(index, ev, cat, start, end)?;
                true
            }
            "kernel" | "Kernel" | "gpu_memcpy" | "Memcpy" | "gpu_memset" | "Memset" => {
                self.push_gpu(index, ev, cat, start, end)?;
                true
            }
            "gpu_user_annotation" => {
                self.counts.gpu_annotations += 1;
                let name = self.name_of(index, ev)?;
                self.gpu_annotations.push(GpuAnnotation {
                    name,
                    device: ident_int(ev.pid.as_ref()).unwrap_or(-1),
                    stream: ident_int(ev.tid.as_ref()).unwrap_or(-1),
                    start,
                    end,
                    external_id: int_arg(ev.args.external_id),
                });
                false
            }
            "cuda_sync" => {
                self.counts.syncs += 1;
                let name = self.name_of(index, ev)?;
                self.syncs.push(SyncEvent { name, start, end });
                false
            }
            other => {
                self.count_unmodeled(
                    "event_category",
                    if other.is_empty() { "(none)" } else { other },
                );
                false
            }
        };
        if kept {
            self.first_start = Some(self.first_start.map_or(start, |t| t.min(start)));
            self.last_end = Some(self.last_end.map_or(end, |t| t.max(end)));
        }
        Ok(())
    }

    fn name_of<'a>(&mut self, index: u64, ev: &RawEvent<'a>) -> Result<u32>
    where
        S: Intern<'a>,
    {
        match &ev.name {
            Some(name) => Ok(self.strings.intern_text(name)),
            None => Err(event_error(index, "a complete (`X`) event has no `name`")
                .with_expected("a string `name`")),
        }
    }

    fn host_thread(&mut self, index: u64, ev: &RawEvent<'_>) -> Result<u32> {
        match (&ev.pid, &ev.tid) {
            (Some(pid), Some(tid)) => Ok(self.thread(pid, tid)),
            _ => Err(event_error(index, "a host event has no `pid`/`tid`")
                .with_expected("`pid` and `tid` on cpu_op, user_annotation and runtime events")),
        }
    }

    fn push_cpu<'a>(
        &mut self,
        index: u64,
        ev: &RawEvent<'a>,
        cat: &str,
        start: i64,
        end: i64,
    ) -> Result<()>
    where
        S: Intern<'a>,
    {
        let kind = match cat {
            "user_annotation" => {
                self.counts.annotations += 1;
                CpuKind::Annotation
            }
            "python_function" => {
                self.counts.python_functions += 1;
                CpuKind::Python
            }
            other => {
                self.counts.cpu_ops += 1;
                if other == "Operator" {
                    self.counts.legacy += 1;
                }
                CpuKind::Op
            }
        };
        let name = self.name_of(index, ev)?;
        let thread = self.host_thread(index, ev)?;
        let comm = self.comm_args(ev);
        let shapes = match (kind, ev.args.shapes.as_ref()) {
            (CpuKind::Op, Some(raw)) => self.shapes.intern(raw, raw.hash),
            _ => NONE,
        };
        self.cpu.push(CpuEvent {
            name,
            thread,
            kind,
            start,
            end,
            external_id: int_arg(ev.args.external_id),
            comm,
            shapes,
        });
        Ok(())
    }

    fn push_runtime<'a>(
        &mut self,
        index: u64,
        ev: &RawEvent<'a>,
        cat: &str,
        start: i64,
        end: i64,
    ) -> Result<()>
    where
        S: Intern<'a>,
    {
        let driver = cat == "cuda_driver";
        if driver {
            self.counts.driver_calls += 1;
        } else {
            self.counts.runtime_calls += 1;
        }
        if cat == "Runtime" {
            self.counts.legacy += 1;
        }
        if ev.name.as_deref().is_some_and(|n| n.starts_with("hip")) {
            self.counts.hip_calls += 1;
        }
        let name = self.name_of(index, ev)?;
        let thread = self.host_thread(index, ev)?;
        self.runtime.push(RuntimeEvent {
            name,
            thread,
            driver,
            start,
            end,
            correlation: int_arg(ev.args.correlation),
            external_id: int_arg(ev.args.external_id),
        });
        Ok(())
    }

    fn push_gpu<'a>(
        &mut self,
        index: u64,
        ev: &RawEvent<'a>,
        cat: &str,
        start: i64,
        end: i64,
    ) -> Result<()>
    where
        S: Intern<'a>,
    {
        let kind = match cat {
            "kernel" | "Kernel" => {
                self.counts.kernels += 1;
                GpuKind::Kernel
            }
            "gpu_memcpy" | "Memcpy" => {
                self.counts.memcpys += 1;
                GpuKind::Memcpy
            }
            _ => {
                self.counts.memsets += 1;
                GpuKind::Memset
            }
        };
        if matches!(cat, "Kernel" | "Memcpy" | "Memset") {
            self.counts.legacy += 1;
        }
        let name = self.name_of(index, ev)?;
        let args = &ev.args;
        let device = args
            .device
            .and_then(Num::as_int)
            .or_else(|| ident_int(ev.pid.as_ref()))
            .unwrap_or(-1);
        let stream = match args.stream.map(Num::as_int) {
            Some(Some(stream)) => stream,
            Some(None) => {
                return Err(
                    event_error(index, "a GPU event's `args.stream` is not an integer")
                        .with_expected("an integer stream id"),
                )
            }
            None => ident_int(ev.tid.as_ref()).unwrap_or_else(|| {
                self.counts.gpu_without_stream += 1;
                -1
            }),
        };
        let launch = args
            .launch
            .as_deref()
            .filter(|l| kind == GpuKind::Kernel && (l.grid.is_some() || l.registers.is_some()));
        let config = if let Some(launch) = launch {
            let dims = |d: Option<super::raw::Dim3>| d.and_then(|d| d.0).unwrap_or([-1; 3]);
            self.launch_configs.push(LaunchConfig {
                grid: dims(launch.grid),
                block: dims(launch.block),
                registers_per_thread: int_arg(launch.registers),
                shared_memory_bytes: int_arg(launch.shared_memory),
                occupancy_pct: launch.occupancy.and_then(Num::as_f64).unwrap_or(f64::NAN),
            });
            u32::try_from(self.launch_configs.len() - 1).unwrap_or(NONE)
        } else {
            NONE
        };
        let comm = self.comm_args(ev);
        self.gpu.push(GpuEvent {
            name,
            kind,
            device,
            stream,
            start,
            end,
            correlation: int_arg(args.correlation),
            external_id: int_arg(args.external_id),
            bytes: int_arg(args.bytes),
            config,
            comm,
        });
        Ok(())
    }

    fn comm_args<'a>(&mut self, ev: &RawEvent<'a>) -> u32
    where
        S: Intern<'a>,
    {
        let Some(comm) = ev.args.comm.as_deref() else {
            return NONE;
        };
        let Some(collective) = &comm.collective else {
            return NONE;
        };
        let collective = self.strings.intern_text(collective);
        let mut interned =
            |v: &Option<Cow<'a, str>>| v.as_ref().map_or(NONE, |s| self.strings.intern_text(s));
        let dtype = interned(&comm.dtype);
        let group_name = interned(&comm.group_name);
        self.comms.push(CommArgs {
            collective,
            in_nelems: int_arg(comm.in_nelems),
            out_nelems: int_arg(comm.out_nelems),
            group_size: int_arg(comm.group_size),
            dtype,
            group_name,
        });
        u32::try_from(self.comms.len() - 1).unwrap_or(NONE)
    }
}

fn ident_int(ident: Option<&Ident<'_>>) -> Option<i64> {
    match ident {
        Some(Ident::Int(v)) => Some(*v),
        _ => None,
    }
}

fn int_arg(value: Option<Num>) -> i64 {
    value.and_then(Num::as_int).unwrap_or(-1)
}

fn event_error(index: u64, message: &str) -> Error {
    Error::input(codes::EVENT_INVALID, format!("event {index}: {message}"))
}

fn problem_error(index: u64, problem: &Problem) -> Error {
    match problem {
        Problem::DuplicateKey(key) => Error::input(
            codes::DUPLICATE_KEY,
            format!("event {index} has the key `{key}` twice"),
        )
        .with_expected("each key once per JSON object")
        .with_observed(format!("`{key}` repeated")),
        Problem::BadTimestamp { field, text } => Error::input(
            codes::TIMESTAMP_INVALID,
            format!("event {index}: `{field}` is not a number of microseconds in range"),
        )
        .with_expected("a JSON number of microseconds")
        .with_observed(crate::shape::of(text.as_bytes())),
    }
}
