//! The compact event model: one small struct per kept event, names interned once, times in integer
//! nanoseconds. Memory grows with the events kept, not with the JSON text.

use super::codes;
use super::raw::{Ident, Num, Problem, RawEvent, ShapesRaw, UNUSED_ARGS, UNUSED_FIELDS};
use crate::error::{Error, Result};
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// "No link" / "absent" in index and id columns.
pub const NONE: u32 = u32::MAX;

/// FxHash's multiply-rotate hasher, for the maps keyed by names and ids that ingest and linking
/// probe once per event (SipHash dominated their cost). Trace content is not an adversary here: a
/// crafted trace could only make loading slower.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.add(u64::from_le_bytes(
                <[u8; 8]>::try_from(word).unwrap_or_default(),
            ));
        }
        let mut last = [0_u8; 8];
        for (slot, b) in last.iter_mut().zip(words.remainder()) {
            *slot = *b;
        }
        self.add(u64::from_le_bytes(last));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_i64(&mut self, n: i64) {
        self.add(n as u64);
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CpuKind {
    /// `user_annotation`: a `record_function` range, including `ProfilerStep#N`.
    Annotation,
    /// `cpu_op` (2021 format: `Operator`).
    Op,
    /// `python_function` (with_stack traces).
    Python,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GpuKind {
    Kernel,
    Memcpy,
    Memset,
}

impl GpuKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GpuKind::Kernel => "kernel",
            GpuKind::Memcpy => "memcpy",
            GpuKind::Memset => "memset",
        }
    }
}

/// A host-side range: op, annotation or Python function.
#[derive(Debug, Clone, Copy)]
pub struct CpuEvent {
    pub name: u32,
    pub thread: u32,
    pub kind: CpuKind,
    pub start: i64,
    pub end: i64,
    /// `External id`, or -1.
    pub external_id: i64,
    /// Index into `Trace::comms` (`record_param_comms` arguments), or `NONE`.
    pub comm: u32,
    /// Index into `Events::shapes` (the op's `record_shapes` arguments), or `NONE`.
    pub shapes: u32,
}

/// A CUDA runtime or driver call (`cuda_runtime`, `cuda_driver`; 2021: `Runtime`).
#[derive(Debug, Clone, Copy)]
pub struct RuntimeEvent {
    pub name: u32,
    pub thread: u32,
    pub driver: bool,
    pub start: i64,
    pub end: i64,
    /// CUPTI correlation id, or -1.
    pub correlation: i64,
    pub external_id: i64,
}

/// Launch configuration of a kernel, as CUPTI recorded it (absent values are -1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaunchConfig {
    pub grid: [i64; 3],
    pub block: [i64; 3],
    pub registers_per_thread: i64,
    pub shared_memory_bytes: i64,
    /// `est. achieved occupancy %`, or NaN.
    pub occupancy_pct: f64,
}

/// Work on a GPU stream: a kernel, memcpy or memset.
#[derive(Debug, Clone, Copy)]
pub struct GpuEvent {
    pub name: u32,
    pub kind: GpuKind,
    pub device: i64,
    /// Stream id, or -1 when the event names none.
    pub stream: i64,
    pub start: i64,
    pub end: i64,
    pub correlation: i64,
    pub external_id: i64,
    /// Bytes moved or set (memcpy/memset), or -1.
    pub bytes: i64,
    /// Index into `Trace::launch_configs`, or `NONE`.
    pub config: u32,
    /// Index into `Trace::comms`, or `NONE`.
    pub comm: u32,
}

/// A `gpu_user_annotation` range: a `record_function` as seen on a GPU stream.
#[derive(Debug, Clone, Copy)]
pub struct GpuAnnotation {
    pub name: u32,
    pub device: i64,
    pub stream: i64,
    pub start: i64,
    pub end: i64,
    pub external_id: i64,
}

/// Collective arguments (`record_param_comms` ops and NCCL kernels carry them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommArgs {
    pub collective: u32,
    pub in_nelems: i64,
    pub out_nelems: i64,
    pub group_size: i64,
    pub dtype: u32,
    pub group_name: u32,
}

/// A `cuda_sync` event (synchronization recorded by CUPTI).
#[derive(Debug, Clone, Copy)]
pub struct SyncEvent {
    pub name: u32,
    pub start: i64,
    pub end: i64,
}

/// An `ac2g`-style flow end point (`s` at the launch, `f` at the GPU activity).
#[derive(Debug, Clone, Copy)]
pub struct FlowPoint {
    pub id: i64,
    pub ts: i64,
    pub start: bool,
}

/// A host thread or GPU track key, as the trace spells it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OwnedIdent {
    Int(i64),
    Str(Box<str>),
}

impl OwnedIdent {
    fn from_ident(ident: &Ident<'_>) -> Self {
        match ident {
            Ident::Int(v) => OwnedIdent::Int(*v),
            Ident::Str(s) => OwnedIdent::Str(s.as_ref().into()),
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            OwnedIdent::Int(v) => Some(*v),
            OwnedIdent::Str(_) => None,
        }
    }
}

impl std::fmt::Display for OwnedIdent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OwnedIdent::Int(v) => write!(f, "{v}"),
            OwnedIdent::Str(s) => f.write_str(s),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Thread {
    pub pid: OwnedIdent,
    pub tid: OwnedIdent,
}

/// Interned strings: names of events and a few argument values.
#[derive(Debug, Default, Clone)]
pub struct Strings {
    pub values: Vec<Box<str>>,
    index: FastMap<Box<str>, u32>,
}

impl Strings {
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        let id = u32::try_from(self.values.len()).unwrap_or(NONE);
        self.values.push(s.into());
        self.index.insert(s.into(), id);
        id
    }

    pub fn get(&self, id: u32) -> &str {
        self.values.get(id as usize).map_or("", |s| s.as_ref())
    }

    pub fn lookup(&self, s: &str) -> Option<u32> {
        self.index.get(s).copied()
    }
}

/// Interning as the reader needs it: a string of the trace's text, borrowed or (with escapes) owned.
pub trait Intern<'a> {
    // The `Cow` itself: a borrowed one is kept borrowed (a segment's names cost no allocation).
    #[allow(clippy::ptr_arg)]
    fn intern_text(&mut self, s: &Cow<'a, str>) -> u32;
}

impl<'a> Intern<'a> for Strings {
    fn intern_text(&mut self, s: &Cow<'a, str>) -> u32 {
        self.intern(s)
    }
}

/// The names of one segment of the text (`segments`), borrowed from it: a segment is read on a pool
/// thread into its own [`Events`], whose names become the trace's in [`Events::append`].
#[derive(Debug, Default)]
pub struct SegmentStrings<'a> {
    pub values: Vec<Cow<'a, str>>,
    index: FastMap<Cow<'a, str>, u32>,
}

impl<'a> Intern<'a> for SegmentStrings<'a> {
    fn intern_text(&mut self, s: &Cow<'a, str>) -> u32 {
        if let Some(&id) = self.index.get(s.as_ref()) {
            return id;
        }
        let id = u32::try_from(self.values.len()).unwrap_or(NONE);
        self.values.push(s.clone());
        self.index.insert(s.clone(), id);
        id
    }
}

/// One distinct set of `record_shapes` arguments, as JSON text (parsed where a fact needs it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShapeRecord {
    pub dims: Option<Box<str>>,
    pub types: Option<Box<str>>,
    pub concrete: Option<Box<str>>,
}

impl ShapeRecord {
    fn of(raw: &ShapesRaw<'_>) -> Self {
        ShapeRecord {
            dims: raw.dims.map(Into::into),
            types: raw.types.map(Into::into),
            concrete: raw.concrete.map(Into::into),
        }
    }

    fn is(&self, raw: &ShapesRaw<'_>) -> bool {
        self.dims.as_deref() == raw.dims
            && self.types.as_deref() == raw.types
            && self.concrete.as_deref() == raw.concrete
    }
}

/// The distinct shape records of a trace: ops repeat a few shapes, so each is kept once.
#[derive(Debug, Default, Clone)]
pub struct Shapes {
    pub records: Vec<ShapeRecord>,
    /// The hash of each record ([`ShapesRaw::hash`]), so a segment's records join the trace's.
    hashes: Vec<u64>,
    /// First record of each hash ([`ShapesRaw::hash`]); another record with the same hash goes
    /// to `spill`, so a collision costs a lookup, never a wrong record.
    by_hash: FastMap<u64, u32>,
    spill: HashMap<ShapeRecord, u32>,
}

impl Shapes {
    pub fn intern(&mut self, raw: &ShapesRaw<'_>, hash: u64) -> u32 {
        let next = u32::try_from(self.records.len()).unwrap_or(NONE);
        match self.by_hash.get(&hash).copied() {
            Some(id) if self.records.get(id as usize).is_some_and(|r| r.is(raw)) => id,
            Some(_) => {
                let record = ShapeRecord::of(raw);
                if let Some(&id) = self.spill.get(&record) {
                    return id;
                }
                self.spill.insert(record.clone(), next);
                self.records.push(record);
                self.hashes.push(hash);
                next
            }
            None => {
                self.by_hash.insert(hash, next);
                self.records.push(ShapeRecord::of(raw));
                self.hashes.push(hash);
                next
            }
        }
    }

    /// The trace's id of each of `part`'s records (a segment read on its own), interned here.
    fn absorb(&mut self, part: &Shapes) -> Vec<u32> {
        part.records
            .iter()
            .zip(&part.hashes)
            .map(|(record, &hash)| {
                let raw = ShapesRaw {
                    dims: record.dims.as_deref(),
                    types: record.types.as_deref(),
                    concrete: record.concrete.as_deref(),
                    part_hashes: [0; 3],
                    hash,
                };
                self.intern(&raw, hash)
            })
            .collect()
    }

    pub fn get(&self, id: u32) -> Option<&ShapeRecord> {
        self.records.get(id as usize)
    }
}

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

    pub fn count_unmodeled(&mut self, kind: &'static str, name: &str) {
        self.unmodeled.count(kind, name);
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

    fn thread(&mut self, pid: &Ident<'_>, tid: &Ident<'_>) -> u32 {
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

    fn new_thread(&mut self, key: (OwnedIdent, OwnedIdent)) -> u32 {
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
