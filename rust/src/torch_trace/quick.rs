//! A hand-written reader for the common shape of a Kineto event (a flat object; `args` a flat
//! object of scalars, arrays for the args nobody reads), giving exactly the `RawEvent` the serde
//! reader in `raw` gives. It reads keys and kept strings in place and skips unread values with a
//! byte scanner (still checking their syntax), where serde_json's visitors spent most of the parse.
//! Anything it is not sure of (an escape in a kept string or a key, a number serde_json would turn
//! into a float, a value of an unexpected type, bad or cut JSON) makes it give up, and the serde
//! reader reads the event from its start: errors, and every rare case, stay serde_json's.

use super::raw::{
    arg_bit, field_bit, finish_args, first_sighting, parse_event_into, set_shape, timestamp,
    unread_arg, unread_field, Args, Dim3, Ident, Num, Problem, RawEvent,
};
use super::scan::{Cursor, GiveUp, Quick};
use std::borrow::Cow;

/// [`parse_event_into`], read quickly where the event allows it: the same event, the same length,
/// the same error.
pub fn read_event_into<'de>(
    text: &'de str,
    event: &mut RawEvent<'de>,
) -> Option<Result<usize, serde_json::Error>> {
    match quick_event(text, event) {
        Ok(end) => Some(Ok(end)),
        Err(GiveUp) => {
            *event = RawEvent::default();
            parse_event_into(text, event)
        }
    }
}

/// The event at the start of `text` into `ev` (a default one); the length it took.
pub(super) fn quick_event<'de>(text: &'de str, ev: &mut RawEvent<'de>) -> Quick<usize> {
    let mut c = Cursor::new(text);
    c.expect(b'{')?;
    if c.peek()? == b'}' {
        return Ok(c.pos + 1);
    }
    let mut seen = 0_u64;
    loop {
        c.expect(b'"')?;
        let key = c.plain_str()?;
        c.expect(b':')?;
        field(&mut c, key, &mut seen, ev)?;
        match c.next()? {
            b',' => {}
            b'}' => return Ok(c.pos),
            _ => return Err(GiveUp),
        }
    }
}

/// One top-level field, as `raw::EventVisitor` reads it.
fn field<'de>(
    c: &mut Cursor<'de>,
    key: &'de str,
    seen: &mut u64,
    ev: &mut RawEvent<'de>,
) -> Quick<()> {
    let Some(bit) = field_bit(key) else {
        unread_field(ev, Cow::Borrowed(key));
        return c.skip_value(1);
    };
    if !first_sighting(seen, bit, key, &mut ev.problem) {
        return c.skip_value(1);
    }
    match bit {
        0 => ev.ph = Some(Cow::Borrowed(string(c)?)),
        1 => ev.cat = Some(Cow::Borrowed(string(c)?)),
        2 => ev.name = Some(Cow::Borrowed(string(c)?)),
        3 => ev.pid = Some(ident(c)?),
        4 => ev.tid = Some(ident(c)?),
        // Only numbers: a string is a `BadTimestamp` whose text serde_json's raw value gives.
        5 => ev.ts = time(c, "ts", &mut ev.problem)?,
        6 => ev.dur = time(c, "dur", &mut ev.problem)?,
        7 => ev.id = Some(ident(c)?),
        _ => {
            args(c, &mut ev.args)?;
            if let Some(problem) = ev.args.problem.take() {
                ev.problem.get_or_insert(problem);
            }
        }
    }
    Ok(())
}

/// A `ts`/`dur`: Kineto's `digits.ddd` read at once, any other number through `micros_to_ns`.
fn time(
    c: &mut Cursor<'_>,
    field: &'static str,
    problem: &mut Option<Box<Problem>>,
) -> Quick<Option<i64>> {
    match c.plain_micros()? {
        Some(ns) => Ok(Some(ns)),
        None => Ok(timestamp(c.number()?, field, problem)),
    }
}

/// A string value without escapes.
fn string<'de>(c: &mut Cursor<'de>) -> Quick<&'de str> {
    c.expect(b'"')?;
    c.plain_str()
}

fn ident<'de>(c: &mut Cursor<'de>) -> Quick<Ident<'de>> {
    if c.peek()? == b'"' {
        return Ok(Ident::Str(Cow::Borrowed(string(c)?)));
    }
    c.int_or_number()?.map(Ident::Int).map_err(|_| GiveUp)
}

/// A scalar read as `raw::AnyVisitor` reads it: numbers and strings kept, `true`/`false`/`null`
/// as neither. Arrays and objects are left to serde_json.
enum Scalar<'de> {
    Num(Num),
    Str(&'de str),
    Other,
}

fn scalar<'de>(c: &mut Cursor<'de>) -> Quick<Scalar<'de>> {
    match c.peek()? {
        b'"' => string(c).map(Scalar::Str),
        b'-' | b'0'..=b'9' => match c.int_or_number()? {
            Ok(v) => Ok(Scalar::Num(Num::Int(v))),
            // An integer serde_json would make a float (long, or `-0`) is left to it.
            Err(text) if !text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) => Err(GiveUp),
            // serde_json's own float reading, so the value is the same to the last bit.
            Err(text) => serde_json::from_str(text)
                .map(|v| Scalar::Num(Num::Float(v)))
                .map_err(|_| GiveUp),
        },
        b't' | b'f' | b'n' => c.skip_value(2).map(|()| Scalar::Other),
        _ => Err(GiveUp),
    }
}

fn num(c: &mut Cursor<'_>) -> Quick<Num> {
    Ok(match scalar(c)? {
        Scalar::Num(n) => n,
        Scalar::Str(_) | Scalar::Other => Num::Other,
    })
}

fn maybe_str<'de>(c: &mut Cursor<'de>) -> Quick<Option<Cow<'de, str>>> {
    Ok(match scalar(c)? {
        Scalar::Str(s) => Some(Cow::Borrowed(s)),
        Scalar::Num(_) | Scalar::Other => None,
    })
}

/// `grid`/`block`: an array of scalars, as `raw::Dim3Visitor` reads it.
fn dim3(c: &mut Cursor<'_>) -> Quick<Dim3> {
    c.expect(b'[')?;
    let mut out = [0_i64; 3];
    let mut n = 0;
    let mut ok = true;
    if c.peek()? == b']' {
        c.pos += 1;
        return Ok(Dim3(None));
    }
    loop {
        match (out.get_mut(n), num(c)?.as_int()) {
            (Some(slot), Some(v)) => *slot = v,
            _ => ok = false,
        }
        n += 1;
        match c.next()? {
            b',' => {}
            b']' => return Ok(Dim3((ok && n == 3).then_some(out))),
            _ => return Err(GiveUp),
        }
    }
}

/// The `args` object, as `raw::ArgsVisitor` reads it.
fn args<'de>(c: &mut Cursor<'de>, args: &mut Args<'de>) -> Quick<()> {
    c.expect(b'{')?;
    if c.peek()? == b'}' {
        c.pos += 1;
        return Ok(());
    }
    let mut seen = 0_u64;
    loop {
        c.expect(b'"')?;
        let key = c.plain_str()?;
        c.expect(b':')?;
        arg(c, key, &mut seen, args)?;
        match c.next()? {
            b',' => {}
            b'}' => {
                finish_args(args);
                return Ok(());
            }
            _ => return Err(GiveUp),
        }
    }
}

fn arg<'de>(c: &mut Cursor<'de>, key: &'de str, seen: &mut u64, args: &mut Args<'de>) -> Quick<()> {
    let Some(bit) = arg_bit(key) else {
        unread_arg(args, Cow::Borrowed(key));
        return c.skip_value(2);
    };
    if !first_sighting(seen, bit, key, &mut args.problem) {
        return c.skip_value(2);
    }
    match bit {
        0 => args.external_id = Some(num(c)?),
        1 => args.correlation = Some(num(c)?),
        2 => args.stream = Some(num(c)?),
        3 => args.device = Some(num(c)?),
        4 => args.bytes = Some(num(c)?),
        5..=9 => {
            let launch = args.launch.get_or_insert_with(Box::default);
            match bit {
                5 => launch.grid = Some(dim3(c)?),
                6 => launch.block = Some(dim3(c)?),
                7 => launch.registers = Some(num(c)?),
                8 => launch.shared_memory = Some(num(c)?),
                _ => launch.occupancy = Some(num(c)?),
            }
        }
        16 => args.meta.get_or_insert_with(Box::default).name = maybe_str(c)?,
        17 => args.meta.get_or_insert_with(Box::default).labels = maybe_str(c)?,
        18..=21 => set_shape(args, bit, c.raw_value(2)?),
        _ => {
            let comm = args.comm.get_or_insert_with(Box::default);
            match bit {
                10 => comm.collective = maybe_str(c)?,
                11 => comm.in_nelems = Some(num(c)?),
                12 => comm.out_nelems = Some(num(c)?),
                13 => comm.group_size = Some(num(c)?),
                14 => comm.dtype = maybe_str(c)?,
                _ => comm.group_name = maybe_str(c)?,
            }
        }
    }
    Ok(())
}
