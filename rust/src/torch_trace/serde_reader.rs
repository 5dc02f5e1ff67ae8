//! The serde reader of one trace event (`RawEvent`): serde_json's deserializer with visitors that keep
//! only what gpuopt models. It reads every event the quick reader (`quick`) gives up on, so its
//! answers, errors included, are the reference: both apply the same rules (`raw`).

use super::memo::text_hash;
use super::raw::{
    arg_bit, field_bit, finish_args, first_sighting, set_shape, timestamp, unread_arg,
    unread_field, Args, Dim3, Ident, MaybeStr, Num, RawEvent,
};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

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
    use crate::torch_trace::raw::Problem;

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
    fn wrong_types_for_names_are_errors() {
        assert!(parse_event(br#"{"name": 3}"#).is_err());
        assert!(parse_event(br#"[1, 2]"#).is_err());
    }
}
