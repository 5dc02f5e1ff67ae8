//! One trace event as read from its JSON text (`RawEvent`), the same whichever reader read it (the
//! quick reader, `quick`, or the serde reader, `serde_reader`): strings are borrowed where the text
//! has no escapes, no generic JSON value is built, and only the fields gpuopt models are kept. Known
//! fields nobody reads are counted (so they can be reported as unmodeled); unknown ones are named.
//! The key tables and the rules both readers apply to a field are here too.

use super::time::micros_to_ns;
use std::borrow::Cow;

/// A process, thread or flow id: Kineto writes integers, legacy and span events write strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ident<'a> {
    Int(i64),
    Str(Cow<'a, str>),
}

/// A numeric argument whose type is checked where it is used, not while reading (strings, arrays
/// and objects become `Other`, so a trace with an unexpected type elsewhere still loads).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i64),
    Float(f64),
    Other,
}

impl Num {
    /// The value as an integer: an integer, or a float with no fractional part.
    pub fn as_int(self) -> Option<i64> {
        match self {
            Num::Int(v) => Some(v),
            // Integral floats inside the i64 range only; the cast is then exact.
            #[allow(clippy::cast_possible_truncation)]
            Num::Float(v) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(v as i64),
            _ => None,
        }
    }

    pub fn as_f64(self) -> Option<f64> {
        match self {
            #[allow(clippy::cast_precision_loss)]
            Num::Int(v) => Some(v as f64),
            Num::Float(v) => Some(v),
            Num::Other => None,
        }
    }
}

/// A value read as "a string, or anything else" (`None`).
pub type MaybeStr<'a> = Option<Cow<'a, str>>;

/// A problem inside an event that is not a JSON syntax error, reported with its own error code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    DuplicateKey(String),
    BadTimestamp { field: &'static str, text: String },
}

/// Event fields gpuopt knows and does not read (bit i of `RawEvent::unused_fields`).
pub const UNUSED_FIELDS: [&str; 9] = [
    "bp", "s", "cname", "tts", "tdur", "sf", "stack", "scope", "id2",
];

/// Argument keys gpuopt knows and does not read (bit i of `Args::unused`).
pub const UNUSED_ARGS: [&str; 36] = [
    "Record function id",
    "Ev Idx",
    "Sequence number",
    "Fwd thread id",
    "Input Strides",
    "Input names",
    "Output dims",
    "Output type",
    "Output names",
    "Extra arguments",
    "Trace name",
    "Trace iteration",
    "Profiler Event Index",
    "Module Hierarchy",
    "Call stack",
    "context",
    "queued",
    "blocks per SM",
    "warps per SM",
    "memory bandwidth (GB/s)",
    "cbid",
    "external ts",
    "Device",
    "Op count",
    "sort_index",
    "Process Group Description",
    "Process Group Ranks",
    "In split size",
    "Out split size",
    "Global rank start",
    "Global rank stride",
    "Python id",
    "Python parent id",
    "Python thread",
    "kind",
    "cuda_sync_kind",
];

/// The bit of an `UNUSED_ARGS` key: one `match` (dispatched on length, then compared) rather than a
/// scan of forty strings for each of the half-dozen unread args a Kineto op carries.
pub(super) fn unused_arg_bit(key: &str) -> Option<u32> {
    Some(match key {
        "Record function id" => 0,
        "Ev Idx" => 1,
        "Sequence number" => 2,
        "Fwd thread id" => 3,
        "Input Strides" => 4,
        "Input names" => 5,
        "Output dims" => 6,
        "Output type" => 7,
        "Output names" => 8,
        "Extra arguments" => 9,
        "Trace name" => 10,
        "Trace iteration" => 11,
        "Profiler Event Index" => 12,
        "Module Hierarchy" => 13,
        "Call stack" => 14,
        "context" => 15,
        "queued" => 16,
        "blocks per SM" => 17,
        "warps per SM" => 18,
        "memory bandwidth (GB/s)" => 19,
        "cbid" => 20,
        "external ts" => 21,
        "Device" => 22,
        "Op count" => 23,
        "sort_index" => 24,
        "Process Group Description" => 25,
        "Process Group Ranks" => 26,
        "In split size" => 27,
        "Out split size" => 28,
        "Global rank start" => 29,
        "Global rank stride" => 30,
        "Python id" => 31,
        "Python parent id" => 32,
        "Python thread" => 33,
        "kind" => 34,
        "cuda_sync_kind" => 35,
        _ => return None,
    })
}

/// The `args` of an event, as far as gpuopt models them. Kept small: a batch holds thousands.
#[derive(Debug, Default)]
pub struct Args<'a> {
    pub external_id: Option<Num>,
    pub correlation: Option<Num>,
    pub stream: Option<Num>,
    pub device: Option<Num>,
    pub bytes: Option<Num>,
    /// Kernel launch arguments (on kernels only: allocated only when present, which keeps the
    /// event ~100 bytes smaller; thousands are written and read per segment).
    pub launch: Option<Box<LaunchRaw>>,
    /// Collective arguments (rare: allocated only when present).
    pub comm: Option<Box<CommRaw<'a>>>,
    /// `record_shapes` arguments of a `cpu_op` (most ops carry them: kept in place, a box would
    /// cost an allocation per op).
    pub shapes: Option<ShapesRaw<'a>>,
    /// `name` / `labels` of metadata (`M`) events (allocated only when present).
    pub meta: Option<Box<MetaRaw<'a>>>,
    pub unused: u64,
    pub unknown: Vec<Cow<'a, str>>,
    pub problem: Option<Box<Problem>>,
}

/// Launch arguments of a kernel.
#[derive(Debug, Default)]
pub struct LaunchRaw {
    pub grid: Option<Dim3>,
    pub block: Option<Dim3>,
    pub registers: Option<Num>,
    pub shared_memory: Option<Num>,
    pub occupancy: Option<Num>,
}

/// Arguments of a metadata (`M`) event.
#[derive(Debug, Default)]
pub struct MetaRaw<'a> {
    pub name: MaybeStr<'a>,
    pub labels: MaybeStr<'a>,
}

/// Arguments of a collective (`record_param_comms` ops, NCCL kernels).
#[derive(Debug, Default)]
pub struct CommRaw<'a> {
    pub collective: MaybeStr<'a>,
    pub in_nelems: Option<Num>,
    pub out_nelems: Option<Num>,
    pub group_size: Option<Num>,
    pub dtype: MaybeStr<'a>,
    pub group_name: MaybeStr<'a>,
}

/// The `record_shapes` arguments of an op, each kept as its JSON text (read when a fact needs it:
/// most ops repeat a few shapes, so the text is interned, not parsed per event).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ShapesRaw<'a> {
    /// `Input Dims` (2021 format: `Input dims`).
    pub dims: Option<&'a str>,
    /// `Input type`.
    pub types: Option<&'a str>,
    /// `Concrete Inputs`.
    pub concrete: Option<&'a str>,
    /// The `memo::text_hash` of each of the three texts (`dims`, `types`, `concrete`) while they
    /// are read: the quick reader has it from its memo for a text it met before.
    pub part_hashes: [u64; 3],
    /// [`ShapesRaw::text_hash`], set once the `args` object is read: computed where events are
    /// parsed in parallel, so the store thread interns a record with one probe.
    pub hash: u64,
}

impl ShapesRaw<'_> {
    /// A hash of the three texts (from their `part_hashes`).
    pub fn text_hash(&self) -> u64 {
        use std::hash::Hasher;
        let mut h = crate::fxhash::FxHasher::default();
        let parts = [self.dims, self.types, self.concrete];
        for (part, hash) in parts.iter().zip(self.part_hashes) {
            h.write_u64(if part.is_some() { hash } else { u64::MAX });
        }
        h.finish()
    }
}

/// A `grid`/`block` triple; `None` inside when the value was not three integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim3(pub Option<[i64; 3]>);

/// One event as read.
#[derive(Debug, Default)]
pub struct RawEvent<'a> {
    pub ph: Option<Cow<'a, str>>,
    pub cat: Option<Cow<'a, str>>,
    pub name: Option<Cow<'a, str>>,
    pub pid: Option<Ident<'a>>,
    pub tid: Option<Ident<'a>>,
    /// `ts` in nanoseconds (exact, see `time`).
    pub ts: Option<i64>,
    /// `dur` in nanoseconds.
    pub dur: Option<i64>,
    pub id: Option<Ident<'a>>,
    pub args: Args<'a>,
    pub unused_fields: u32,
    pub unknown_fields: Vec<Cow<'a, str>>,
    pub problem: Option<Box<Problem>>,
}

/// The bit of a top-level field gpuopt reads (both readers dispatch on it).
pub(super) fn field_bit(key: &str) -> Option<u32> {
    Some(match key {
        "ph" => 0,
        "cat" => 1,
        "name" => 2,
        "pid" => 3,
        "tid" => 4,
        "ts" => 5,
        "dur" => 6,
        "id" => 7,
        "args" => 8,
        _ => return None,
    })
}

/// Records a top-level field gpuopt does not read: a known one as its bit, any other by name.
pub(super) fn unread_field<'a>(ev: &mut RawEvent<'a>, key: Cow<'a, str>) {
    match UNUSED_FIELDS.iter().position(|k| *k == key.as_ref()) {
        Some(i) => ev.unused_fields |= 1 << i,
        None => ev.unknown_fields.push(key),
    }
}

/// The bit of an arg key gpuopt reads (both readers dispatch on it).
pub(super) fn arg_bit(key: &str) -> Option<u32> {
    Some(match key {
        // Modern traces write "External id", the 2021 format "external id".
        "External id" | "external id" => 0,
        "correlation" => 1,
        "stream" => 2,
        "device" => 3,
        "bytes" => 4,
        "grid" => 5,
        "block" => 6,
        "registers per thread" => 7,
        "shared memory" => 8,
        "est. achieved occupancy %" => 9,
        "Collective name" => 10,
        "In msg nelems" => 11,
        "Out msg nelems" => 12,
        "Group size" => 13,
        "dtype" => 14,
        "Process Group Name" => 15,
        "name" => 16,
        "labels" => 17,
        "Input Dims" => 18,
        "Input type" => 19,
        "Concrete Inputs" => 20,
        "Input dims" => 21,
        _ => return None,
    })
}

/// Records an arg gpuopt does not read: a known one as its bit, any other by name.
pub(super) fn unread_arg<'a>(args: &mut Args<'a>, key: Cow<'a, str>) {
    match unused_arg_bit(&key) {
        Some(i) => args.unused |= 1 << i,
        None => args.unknown.push(key),
    }
}

/// Keeps the text of a `record_shapes` argument (`bit` 18..=21 of [`arg_bit`]) and its
/// `memo::text_hash`; the 2021 spelling `Input dims` fills the dims only when `Input Dims` did not.
pub(super) fn set_shape<'a>(args: &mut Args<'a>, bit: u32, text: &'a str, hash: u64) {
    let shapes = args.shapes.get_or_insert_with(ShapesRaw::default);
    let (slot, part) = match bit {
        18 => (&mut shapes.dims, 0),
        19 => (&mut shapes.types, 1),
        20 => (&mut shapes.concrete, 2),
        _ if shapes.dims.is_some() => return,
        _ => (&mut shapes.dims, 0),
    };
    *slot = Some(text);
    if let Some(h) = shapes.part_hashes.get_mut(part) {
        *h = hash;
    }
}

/// Completes an `args` object both readers have read.
pub(super) fn finish_args(args: &mut Args<'_>) {
    if let Some(shapes) = args.shapes.as_mut() {
        shapes.hash = shapes.text_hash();
    }
}

/// Marks `bit` in `seen`; on a second sighting records the duplicate and says to skip the value.
#[inline]
pub(super) fn first_sighting(
    seen: &mut u64,
    bit: u32,
    key: &str,
    problem: &mut Option<Box<Problem>>,
) -> bool {
    let mask = 1_u64 << bit;
    if *seen & mask != 0 {
        problem.get_or_insert_with(|| Box::new(Problem::DuplicateKey(key.to_owned())));
        return false;
    }
    *seen |= mask;
    true
}

/// A `ts`/`dur` value's JSON text as nanoseconds; a problem (the first one wins) if it is not one.
pub(super) fn timestamp(
    text: &str,
    field: &'static str,
    problem: &mut Option<Box<Problem>>,
) -> Option<i64> {
    let ns = micros_to_ns(text);
    if ns.is_none() {
        problem.get_or_insert_with(|| {
            Box::new(Problem::BadTimestamp {
                field,
                text: text.chars().take(40).collect(),
            })
        });
    }
    ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unused_arg_bits_follow_the_names() {
        for (i, name) in UNUSED_ARGS.iter().enumerate() {
            assert_eq!(unused_arg_bit(name), Some(i as u32), "{name}");
        }
        assert_eq!(unused_arg_bit("brand new"), None);
    }

    #[test]
    fn an_event_stays_small() {
        // One is filled in place per event; rare argument groups are boxed (the shapes most ops
        // carry are not: a box cost an allocation and a free per op).
        let size = std::mem::size_of::<RawEvent<'_>>();
        assert!(size <= 480, "RawEvent is {size} bytes");
    }
}
