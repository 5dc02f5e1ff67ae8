//! The compact records of the event model (`events`): one small struct per kept event, names as
//! ids into `interned`, times in integer nanoseconds, `NONE` where a link or value is absent.

use super::raw::Ident;
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
    pub(super) fn from_ident(ident: &Ident<'_>) -> Self {
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
