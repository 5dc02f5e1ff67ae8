//! The compact event model: the records of one trace's kept events (`records`), names interned
//! once (`interned`), what was counted and left unmodeled. Memory grows with the events kept, not
//! with the JSON text; `ingest` adds each event read.

use super::interned::{SegmentStrings, Shapes, Strings};
use super::raw::{Ident, UNUSED_ARGS, UNUSED_FIELDS};
use super::records::{
    CommArgs, CpuEvent, FastMap, FlowPoint, GpuAnnotation, GpuEvent, LaunchConfig, OwnedIdent,
    RuntimeEvent, SyncEvent, Thread, NONE,
};
use std::collections::HashMap;

/// Counts of what the trace held, by phase and category.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Counts {
    pub events: u64,
    pub complete: u64,
    pub metadata: u64,
    pub flows: u64,
    pub instant: u64,
    pub cpu_ops: u64,
    pub annotations: u64,
    pub python_functions: u64,
    pub runtime_calls: u64,
    pub driver_calls: u64,
    pub kernels: u64,
    pub memcpys: u64,
    pub memsets: u64,
    pub gpu_annotations: u64,
    pub syncs: u64,
    pub gpu_without_stream: u64,
    /// Events in the 2021 categories (`Operator`, `Runtime`, `Kernel`, `Memcpy`, `Memset`).
    pub legacy: u64,
    /// Runtime calls whose names start with `hip` (ROCm).
    pub hip_calls: u64,
}

impl Counts {
    /// Adds another part's counts (a segment's, see `Events::append`).
    fn add(&mut self, other: &Counts) {
        let Counts {
            events,
            complete,
            metadata,
            flows,
            instant,
            cpu_ops,
            annotations,
            python_functions,
            runtime_calls,
            driver_calls,
            kernels,
            memcpys,
            memsets,
            gpu_annotations,
            syncs,
            gpu_without_stream,
            legacy,
            hip_calls,
        } = other;
        self.events += events;
        self.complete += complete;
        self.metadata += metadata;
        self.flows += flows;
        self.instant += instant;
        self.cpu_ops += cpu_ops;
        self.annotations += annotations;
        self.python_functions += python_functions;
        self.runtime_calls += runtime_calls;
        self.driver_calls += driver_calls;
        self.kernels += kernels;
        self.memcpys += memcpys;
        self.memsets += memsets;
        self.gpu_annotations += gpu_annotations;
        self.syncs += syncs;
        self.gpu_without_stream += gpu_without_stream;
        self.legacy += legacy;
        self.hip_calls += hip_calls;
    }
}

/// Everything read from one trace file, before linking (`S`: the names; a segment's own while the
/// reader reads it, see [`SegmentStrings`]).
#[derive(Debug, Default)]
pub struct Events<S = Strings> {
    pub strings: S,
    pub threads: Vec<Thread>,
    pub thread_names: HashMap<u32, String>,
    pub process_labels: HashMap<OwnedIdent, String>,
    pub cpu: Vec<CpuEvent>,
    pub runtime: Vec<RuntimeEvent>,
    pub gpu: Vec<GpuEvent>,
    pub launch_configs: Vec<LaunchConfig>,
    pub gpu_annotations: Vec<GpuAnnotation>,
    pub comms: Vec<CommArgs>,
    pub shapes: Shapes,
    pub syncs: Vec<SyncEvent>,
    pub flows: Vec<FlowPoint>,
    pub counts: Counts,
    pub unmodeled: Unmodeled,
    /// Earliest start and latest end over all complete events gpuopt keeps.
    pub first_start: Option<i64>,
    pub last_end: Option<i64>,
    thread_index: FastMap<(OwnedIdent, OwnedIdent), u32>,
    int_threads: FastMap<(i64, i64), u32>,
    /// The thread an integer (pid, tid) last named (see [`Events::thread`]).
    last_thread: Option<(i64, i64, u32)>,
}

/// Content recognised but not turned into facts, counted by kind and name.
#[derive(Debug, Default, Clone)]
pub struct Unmodeled {
    /// Counts per bit of `RawEvent::unused_fields` / `Args::unused` (grown on first use).
    pub unused_fields: Vec<u64>,
    pub unused_args: Vec<u64>,
    pub by_kind: HashMap<&'static str, HashMap<String, u64>>,
}

impl Unmodeled {
    pub fn count(&mut self, kind: &'static str, name: &str) {
        self.count_n(kind, name, 1);
    }

    fn count_n(&mut self, kind: &'static str, name: &str, n: u64) {
        let names = self.by_kind.entry(kind).or_default();
        match names.get_mut(name) {
            Some(count) => *count += n,
            None => {
                names.insert(name.to_owned(), n);
            }
        }
    }

    /// Adds another part's counts.
    fn add(&mut self, other: Unmodeled) {
        let add_bits = |mine: &mut Vec<u64>, theirs: &[u64]| {
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), 0);
            }
            for (m, t) in mine.iter_mut().zip(theirs) {
                *m += t;
            }
        };
        add_bits(&mut self.unused_fields, &other.unused_fields);
        add_bits(&mut self.unused_args, &other.unused_args);
        for (kind, names) in other.by_kind {
            for (name, n) in names {
                self.count_n(kind, &name, n);
            }
        }
    }

    /// Every item as (kind, name, count), sorted by kind then name.
    pub fn items(&self) -> Vec<(String, String, u64)> {
        let mut out: Vec<(String, String, u64)> = Vec::new();
        let fixed = UNUSED_FIELDS
            .iter()
            .zip(self.unused_fields.iter())
            .map(|(n, c)| ("event_field", *n, *c))
            .chain(
                UNUSED_ARGS
                    .iter()
                    .zip(self.unused_args.iter())
                    .map(|(n, c)| ("event_arg", *n, *c)),
            );
        let mut merged: HashMap<(&str, &str), u64> = HashMap::new();
        for (kind, name, count) in fixed.filter(|(_, _, c)| *c > 0) {
            *merged.entry((kind, name)).or_default() += count;
        }
        for (kind, names) in &self.by_kind {
            for (name, count) in names {
                *merged.entry((kind, name.as_str())).or_default() += count;
            }
        }
        out.extend(
            merged
                .into_iter()
                .map(|((k, n), c)| (k.to_owned(), n.to_owned(), c)),
        );
        out.sort();
        out
    }
}

impl Events {
    /// A copy with the same names, threads, launch configs, collective arguments, counts and
    /// unmodeled content, and no events (`scope` fills in the events it keeps).
    pub fn empty_like(&self) -> Events {
        Events {
            strings: self.strings.clone(),
            threads: self.threads.clone(),
            thread_names: self.thread_names.clone(),
            process_labels: self.process_labels.clone(),
            launch_configs: self.launch_configs.clone(),
            comms: self.comms.clone(),
            shapes: self.shapes.clone(),
            counts: self.counts.clone(),
            unmodeled: self.unmodeled.clone(),
            first_start: self.first_start,
            last_end: self.last_end,
            thread_index: self.thread_index.clone(),
            int_threads: self.int_threads.clone(),
            ..Events::default()
        }
    }

    /// Adds the events of the next segment of the text (read on its own, in file order after the
    /// ones already here): its names and threads become the trace's, in the order a reading of the
    /// whole text would have met them, so the result is exactly that reading's.
    pub fn append(&mut self, part: Events<SegmentStrings<'_>>) {
        let names: Vec<u32> = part
            .strings
            .values
            .iter()
            .map(|s| self.strings.intern(s))
            .collect();
        let name = |id: u32| names.get(id as usize).copied().unwrap_or(NONE);
        let threads: Vec<u32> = part
            .threads
            .iter()
            .map(|t| self.owned_thread(&t.pid, &t.tid))
            .collect();
        let thread = |id: u32| threads.get(id as usize).copied().unwrap_or(NONE);
        let shift = |id: u32, base: usize| {
            if id == NONE {
                NONE
            } else {
                u32::try_from(base + id as usize).unwrap_or(NONE)
            }
        };
        let (configs, comms) = (self.launch_configs.len(), self.comms.len());
        let shape_ids = self.shapes.absorb(&part.shapes);
        let shape = |id: u32| shape_ids.get(id as usize).copied().unwrap_or(NONE);
        for (t, value) in part.thread_names {
            self.thread_names.insert(thread(t), value);
        }
        self.process_labels.extend(part.process_labels);
        self.cpu.extend(part.cpu.iter().map(|c| CpuEvent {
            name: name(c.name),
            thread: thread(c.thread),
            comm: shift(c.comm, comms),
            shapes: shape(c.shapes),
            ..*c
        }));
        self.runtime
            .extend(part.runtime.iter().map(|r| RuntimeEvent {
                name: name(r.name),
                thread: thread(r.thread),
                ..*r
            }));
        self.gpu.extend(part.gpu.iter().map(|g| GpuEvent {
            name: name(g.name),
            config: shift(g.config, configs),
            comm: shift(g.comm, comms),
            ..*g
        }));
        self.launch_configs.extend_from_slice(&part.launch_configs);
        self.gpu_annotations
            .extend(part.gpu_annotations.iter().map(|a| GpuAnnotation {
                name: name(a.name),
                ..*a
            }));
        let interned = |id: u32| if id == NONE { NONE } else { name(id) };
        self.comms.extend(part.comms.iter().map(|c| CommArgs {
            collective: name(c.collective),
            dtype: interned(c.dtype),
            group_name: interned(c.group_name),
            ..*c
        }));
        self.syncs.extend(part.syncs.iter().map(|s| SyncEvent {
            name: name(s.name),
            ..*s
        }));
        self.flows.extend_from_slice(&part.flows);
        self.counts.add(&part.counts);
        self.unmodeled.add(part.unmodeled);
        if let Some(start) = part.first_start {
            self.first_start = Some(self.first_start.map_or(start, |t| t.min(start)));
        }
        if let Some(end) = part.last_end {
            self.last_end = Some(self.last_end.map_or(end, |t| t.max(end)));
        }
    }

    /// The trace's id of a thread named by a segment (see [`Events::thread`]).
    fn owned_thread(&mut self, pid: &OwnedIdent, tid: &OwnedIdent) -> u32 {
        if let (OwnedIdent::Int(p), OwnedIdent::Int(t)) = (pid, tid) {
            if let Some(&id) = self.int_threads.get(&(*p, *t)) {
                return id;
            }
        }
        let key = (pid.clone(), tid.clone());
        if let Some(&id) = self.thread_index.get(&key) {
            return id;
        }
        self.new_thread(key)
    }
}

impl<S> Events<S> {
    pub fn count_unmodeled(&mut self, kind: &'static str, name: &str) {
        self.unmodeled.count(kind, name);
    }

    /// The id of the thread (pid, tid), a new one the first time.
    pub(super) fn thread(&mut self, pid: &Ident<'_>, tid: &Ident<'_>) -> u32 {
        if let (Ident::Int(p), Ident::Int(t)) = (pid, tid) {
            // Host events come in long runs on one thread: the last one found is tried first.
            if let Some((lp, lt, id)) = self.last_thread {
                if lp == *p && lt == *t {
                    return id;
                }
            }
            if let Some(&id) = self.int_threads.get(&(*p, *t)) {
                self.last_thread = Some((*p, *t, id));
                return id;
            }
        }
        let key = (OwnedIdent::from_ident(pid), OwnedIdent::from_ident(tid));
        if let Some(&id) = self.thread_index.get(&key) {
            return id;
        }
        self.new_thread(key)
    }

    pub(super) fn new_thread(&mut self, key: (OwnedIdent, OwnedIdent)) -> u32 {
        let id = u32::try_from(self.threads.len()).unwrap_or(NONE);
        self.threads.push(Thread {
            pid: key.0.clone(),
            tid: key.1.clone(),
        });
        if let (OwnedIdent::Int(p), OwnedIdent::Int(t)) = &key {
            self.int_threads.insert((*p, *t), id);
        }
        self.thread_index.insert(key, id);
        id
    }
}
