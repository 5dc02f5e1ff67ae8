//! One trace event read from its JSON bytes: strings are borrowed where the text has no escapes, no
//! generic JSON value is built, and only the fields gpuopt models are kept. Known fields nobody reads
//! are counted (so they can be reported as unmodeled); unknown ones are named.

use super::memo::text_hash;
use super::time::micros_to_ns;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

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
type MaybeStr<'a> = Option<Cow<'a, str>>;

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

/// Reads one event from the bytes of one JSON value (UTF-8 is checked string by string).
pub fn parse_event(bytes: &[u8]) -> Result<RawEvent<'_>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut event = RawEvent::default();
    de.deserialize_map(EventVisitor(&mut event))?;
    de.end()?;
    Ok(event)
}

/// Reads one event from text already known to be UTF-8: the same result as [`parse_event`], without
/// re-validating each string (the reader validates a whole batch at once, which is several times
/// cheaper than validating thousands of short strings one by one).
pub fn parse_event_str(text: &str) -> Result<RawEvent<'_>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut event = RawEvent::default();
    de.deserialize_map(EventVisitor(&mut event))?;
    de.end()?;
    Ok(event)
}

/// Reads the event at the start of `text` (UTF-8 already checked) into `event` (a default one) and
/// returns the number of bytes it took; what follows it (a `,`, the `]`, the next event) is left to
/// the caller. `None` when `text` holds only whitespace. Lets the reader find each event's end by
/// parsing it, with no framing pass; filling `event` in place spares moving a large struct out
/// through every layer of the parse.
pub fn parse_event_into<'de>(
    text: &'de str,
    event: &mut RawEvent<'de>,
) -> Option<Result<usize, serde_json::Error>> {
    if text.trim_start_matches([' ', '\n', '\r', '\t']).is_empty() {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(text);
    if let Err(e) = de.deserialize_map(EventVisitor(event)) {
        return Some(Err(e));
    }
    // A stream reader made now starts its count where the event ended.
    Some(Ok(de.into_iter::<IgnoredAny>().byte_offset()))
}

struct CowStr;

impl<'de> DeserializeSeed<'de> for CowStr {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(CowStrVisitor)
    }
}

struct CowStrVisitor;

impl<'de> Visitor<'de> for CowStrVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

struct IdentSeed;

impl<'de> DeserializeSeed<'de> for IdentSeed {
    type Value = Ident<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(IdentVisitor)
    }
}

struct IdentVisitor;

impl<'de> Visitor<'de> for IdentVisitor {
    type Value = Ident<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer or a string")
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Ident::Int(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        i64::try_from(v)
            .map(Ident::Int)
            .map_err(|_| E::custom(format!("id {v} is out of range")))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Ident::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Ident::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Ident::Str(Cow::Owned(v)))
    }
}

struct NumSeed;

impl<'de> DeserializeSeed<'de> for NumSeed {
    type Value = Num;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(AnyVisitor).map(|v| match v {
            Any::Int(i) => Num::Int(i),
            Any::Float(f) => Num::Float(f),
            Any::Str(_) | Any::Other => Num::Other,
        })
    }
}

struct MaybeStrSeed;

impl<'de> DeserializeSeed<'de> for MaybeStrSeed {
    type Value = MaybeStr<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(AnyVisitor).map(|v| match v {
            Any::Str(s) => Some(s),
            _ => None,
        })
    }
}

/// Any JSON value, keeping only numbers and strings.
enum Any<'a> {
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    Other,
}

struct AnyVisitor;

impl<'de> Visitor<'de> for AnyVisitor {
    type Value = Any<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Any::Other)
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Any::Int(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        #[allow(clippy::cast_precision_loss)]
        Ok(i64::try_from(v).map_or(Any::Float(v as f64), Any::Int))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Any::Float(v))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Any::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Any::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Any::Str(Cow::Owned(v)))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Any::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Any::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Any::Other)
    }
}

struct Dim3Seed;

impl<'de> DeserializeSeed<'de> for Dim3Seed {
    type Value = Dim3;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(Dim3Visitor)
    }
}

struct Dim3Visitor;

impl<'de> Visitor<'de> for Dim3Visitor {
    type Value = Dim3;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("three integers")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = [0_i64; 3];
        let mut n = 0;
        let mut ok = true;
        while let Some(value) = seq.next_element_seed(NumSeed)? {
            match (out.get_mut(n), value.as_int()) {
                (Some(slot), Some(v)) => *slot = v,
                _ => ok = false,
            }
            n += 1;
        }
        Ok(Dim3((ok && n == 3).then_some(out)))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Dim3(None))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Dim3(None))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Dim3(None))
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Dim3(None))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Dim3(None))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Dim3(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Dim3(None))
    }
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

/// Fills the event it holds (a default one) from a JSON object.
struct EventVisitor<'x, 'de>(&'x mut RawEvent<'de>);

impl<'de> Visitor<'de> for EventVisitor<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a trace event object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let ev = self.0;
        let mut seen = 0_u64;
        while let Some(key) = map.next_key_seed(CowStr)? {
            let Some(bit) = field_bit(&key) else {
                unread_field(ev, key);
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            if !first_sighting(&mut seen, bit, &key, &mut ev.problem) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            match bit {
                0 => ev.ph = Some(map.next_value_seed(CowStr)?),
                1 => ev.cat = Some(map.next_value_seed(CowStr)?),
                2 => ev.name = Some(map.next_value_seed(CowStr)?),
                3 => ev.pid = Some(map.next_value_seed(IdentSeed)?),
                4 => ev.tid = Some(map.next_value_seed(IdentSeed)?),
                5 => {
                    let raw: &'de RawValue = map.next_value()?;
                    ev.ts = timestamp(raw.get(), "ts", &mut ev.problem);
                }
                6 => {
                    let raw: &'de RawValue = map.next_value()?;
                    ev.dur = timestamp(raw.get(), "dur", &mut ev.problem);
                }
                7 => ev.id = Some(map.next_value_seed(IdentSeed)?),
                _ => {
                    map.next_value_seed(ArgsSeed(&mut ev.args))?;
                    if let Some(problem) = ev.args.problem.take() {
                        ev.problem.get_or_insert(problem);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Fills the event's `args` (default ones) in place.
struct ArgsSeed<'x, 'de>(&'x mut Args<'de>);

impl<'de> DeserializeSeed<'de> for ArgsSeed<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(ArgsVisitor(self.0))
    }
}

struct ArgsVisitor<'x, 'de>(&'x mut Args<'de>);

impl<'de> Visitor<'de> for ArgsVisitor<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an args object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let args = self.0;
        let mut seen = 0_u64;
        while let Some(key) = map.next_key_seed(CowStr)? {
            let Some(bit) = arg_bit(&key) else {
                unread_arg(args, key);
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            if !first_sighting(&mut seen, bit, &key, &mut args.problem) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let num = match bit {
                0 => &mut args.external_id,
                1 => &mut args.correlation,
                2 => &mut args.stream,
                3 => &mut args.device,
                4 => &mut args.bytes,
                5..=9 => {
                    let launch = args.launch.get_or_insert_with(Box::default);
                    match bit {
                        5 => launch.grid = Some(map.next_value_seed(Dim3Seed)?),
                        6 => launch.block = Some(map.next_value_seed(Dim3Seed)?),
                        7 => launch.registers = Some(map.next_value_seed(NumSeed)?),
                        8 => launch.shared_memory = Some(map.next_value_seed(NumSeed)?),
                        _ => launch.occupancy = Some(map.next_value_seed(NumSeed)?),
                    }
                    continue;
                }
                16 => {
                    args.meta.get_or_insert_with(Box::default).name =
                        map.next_value_seed(MaybeStrSeed)?;
                    continue;
                }
                17 => {
                    args.meta.get_or_insert_with(Box::default).labels =
                        map.next_value_seed(MaybeStrSeed)?;
                    continue;
                }
                18..=21 => {
                    let raw: &'de RawValue = map.next_value()?;
                    set_shape(args, bit, raw.get(), text_hash(raw.get().as_bytes()));
                    continue;
                }
                _ => {
                    let comm = args.comm.get_or_insert_with(Box::default);
                    match bit {
                        10 => comm.collective = map.next_value_seed(MaybeStrSeed)?,
                        11 => comm.in_nelems = Some(map.next_value_seed(NumSeed)?),
                        12 => comm.out_nelems = Some(map.next_value_seed(NumSeed)?),
                        13 => comm.group_size = Some(map.next_value_seed(NumSeed)?),
                        14 => comm.dtype = map.next_value_seed(MaybeStrSeed)?,
                        _ => comm.group_name = map.next_value_seed(MaybeStrSeed)?,
                    }
                    continue;
                }
            };
            *num = Some(map.next_value_seed(NumSeed)?);
        }
        finish_args(args);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_kernel_event_with_borrowed_strings() {
        let text = br#"{"ph": "X", "cat": "kernel", "name": "k<1>", "pid": 0, "tid": 7,
            "ts": 5352965321564.706, "dur": 21.664, "args": {"External id": 7, "queued": 0,
            "device": 0, "stream": 7, "correlation": 44, "grid": [8192, 1, 1], "block": [32, 4, 1],
            "registers per thread": 32, "est. achieved occupancy %": 100, "brand new": 1}}"#;
        let ev = parse_event(text).unwrap();
        assert!(matches!(ev.name, Some(Cow::Borrowed("k<1>"))));
        assert_eq!(ev.ts, Some(5_352_965_321_564_706));
        assert_eq!(ev.dur, Some(21_664));
        assert_eq!(ev.pid, Some(Ident::Int(0)));
        assert_eq!(ev.args.correlation.and_then(Num::as_int), Some(44));
        assert_eq!(
            ev.args.launch.as_ref().and_then(|l| l.grid),
            Some(Dim3(Some([8192, 1, 1])))
        );
        assert_eq!(ev.args.unknown, vec![Cow::Borrowed("brand new")]);
        assert_ne!(ev.args.unused, 0);
        assert_eq!(ev.problem, None);
    }

    #[test]
    fn escaped_names_are_owned_and_decoded() {
        let ev = parse_event(br#"{"name": "a\"b\u00e9", "ph": "X"}"#).unwrap();
        let same = parse_event_str(r#"{"name": "a\"b\u00e9", "ph": "X"}"#).unwrap();
        assert_eq!(ev.name, same.name);
        assert_eq!(ev.name.as_deref(), Some("a\"bé"));
    }

    #[test]
    fn duplicate_keys_are_a_problem_not_a_silent_overwrite() {
        let ev = parse_event(br#"{"ts": 1, "ts": 2}"#).unwrap();
        assert_eq!(
            ev.problem.as_deref(),
            Some(&Problem::DuplicateKey("ts".into()))
        );
        assert_eq!(ev.ts, Some(1000));
        let ev = parse_event(br#"{"args": {"correlation": 1, "correlation": 2}}"#).unwrap();
        assert_eq!(
            ev.problem.as_deref(),
            Some(&Problem::DuplicateKey("correlation".into()))
        );
    }

    #[test]
    fn nan_is_a_json_syntax_error_and_strings_are_not_timestamps() {
        assert!(parse_event(br#"{"ts": NaN}"#).is_err());
        let ev = parse_event(br#"{"ts": "12"}"#).unwrap();
        assert!(matches!(
            ev.problem.as_deref(),
            Some(Problem::BadTimestamp { field: "ts", .. })
        ));
    }

    #[test]
    fn a_prefix_parse_reports_where_the_event_ends() {
        let text = r#"  {"ph": "X", "name": "a}"} , {"ph": "M"}"#;
        let mut ev = RawEvent::default();
        let end = parse_event_into(text, &mut ev).unwrap().unwrap();
        assert_eq!(ev.name.as_deref(), Some("a}"));
        assert_eq!(text.get(end..), Some(r#" , {"ph": "M"}"#));
        assert!(parse_event_into("  ", &mut RawEvent::default()).is_none());
        let cut = parse_event_into(r#"{"ph": "X", "na"#, &mut RawEvent::default());
        assert!(cut.unwrap().err().unwrap().is_eof());
    }

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

    #[test]
    fn wrong_types_for_names_are_errors() {
        assert!(parse_event(br#"{"name": 3}"#).is_err());
        assert!(parse_event(br#"[1, 2]"#).is_err());
    }
}
