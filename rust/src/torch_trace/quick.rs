//! A hand-written reader for the common shape of a Kineto event (a flat object; `args` a flat
//! object of scalars, arrays for the args nobody reads), giving exactly the `RawEvent` the serde
//! reader (`serde_reader`) gives. It reads keys and kept strings in place and skips unread values
//! with a byte scanner (still checking their syntax), where serde_json's visitors spent most of the
//! parse; what it met before (`memo`: a key after a key, an array value, a run of array args) it
//! matches byte for byte instead of reading again. Anything it is not sure of (an escape in a kept
//! string or a key, a number serde_json would turn into a float, a value of an unexpected type, bad
//! or cut JSON) makes it give up, and the serde reader reads the event from its start: errors, and
//! every rare case, stay serde_json's.

use super::memo::{text_hash, Memo, SpanArg, SPAN_ARGS};
use super::raw::{
    arg_bit, field_bit, finish_args, first_sighting, set_shape, timestamp, unused_arg_bit, Args,
    Dim3, Ident, Num, Problem, RawEvent, UNUSED_FIELDS,
};
use super::scan::{Cursor, GiveUp, Quick};
use super::serde_reader::parse_event_into;
use std::borrow::Cow;

/// [`parse_event_into`], read quickly where the event allows it: the same event, the same length,
/// the same error. `memo` holds `args` values met before (see `memo`).
pub fn read_event_into<'de>(
    text: &'de str,
    event: &mut RawEvent<'de>,
    memo: &mut Memo,
) -> Option<Result<usize, serde_json::Error>> {
    match quick_event(text, event, memo) {
        Ok(end) => Some(Ok(end)),
        Err(GiveUp) => {
            *event = RawEvent::default();
            parse_event_into(text, event)
        }
    }
}

/// The event at the start of `text` into `ev` (a default one); the length it took.
pub(super) fn quick_event<'de>(
    text: &'de str,
    ev: &mut RawEvent<'de>,
    memo: &mut Memo,
) -> Quick<usize> {
    let mut c = Cursor::new(text);
    c.expect(b'{')?;
    if c.peek()? == b'}' {
        return Ok(c.pos + 1);
    }
    let mut seen = 0_u64;
    let mut prev = FIELD_START;
    loop {
        let (key, code) = key(&mut c, memo, 0, prev, field_code)?;
        field(&mut c, key, code, &mut seen, ev, memo)?;
        prev = code;
        match c.next()? {
            b',' => {}
            b'}' => return Ok(c.pos),
            _ => return Err(GiveUp),
        }
    }
}

/// The code of a top-level key: its [`field_bit`], 16 + its place in `UNUSED_FIELDS`, or
/// `UNKNOWN_FIELD`.
fn field_code(key: &str) -> u32 {
    match field_bit(key) {
        Some(bit) => bit,
        None => UNUSED_FIELDS
            .iter()
            .position(|k| *k == key)
            .map_or(UNKNOWN_FIELD, |i| 16 + i as u32),
    }
}

const UNKNOWN_FIELD: u32 = 63;
const FIELD_START: u32 = 62;

/// The code of an `args` key: its [`arg_bit`], 32 + its [`unused_arg_bit`], or `UNKNOWN_ARG`.
fn arg_code(key: &str) -> u32 {
    match arg_bit(key) {
        Some(bit) => bit,
        None => unused_arg_bit(key).map_or(UNKNOWN_ARG, |i| 32 + i),
    }
}

const UNKNOWN_ARG: u32 = 127;
const ARG_START: u32 = 126;

/// A key read, its text taken only where it is needed (an unknown key's name, a duplicate).
#[derive(Clone, Copy)]
struct Key<'de> {
    /// The text from the key's opening quote on.
    from_quote: &'de str,
    len: usize,
}

impl<'de> Key<'de> {
    fn text(self) -> &'de str {
        self.from_quote.get(1..1 + self.len).unwrap_or_default()
    }
}

/// The key at the cursor (its opening quote next), read up to its value, and its code
/// (`code_of`): guessed from the keys that followed the key coded `prev` at `level` before (see
/// `Memo::guess_key`), else read and learnt.
#[inline(always)]
fn key<'de>(
    c: &mut Cursor<'de>,
    memo: &mut Memo,
    level: usize,
    prev: u32,
    code_of: impl Fn(&str) -> u32,
) -> Quick<(Key<'de>, u32)> {
    if c.peek()? != b'"' {
        return Err(GiveUp);
    }
    let quote = c.pos;
    let from_quote = c.rest();
    if let Some((len, key_len, code)) = memo.guess_key(level, prev, from_quote.as_bytes()) {
        c.pos = quote + len;
        let key = Key {
            from_quote,
            len: key_len,
        };
        return Ok((key, code));
    }
    c.pos += 1;
    let text = c.plain_str()?;
    c.expect(b':')?;
    c.peek()?;
    let code = code_of(text);
    let learnt = (c.pos - quote, text.len(), code);
    memo.learn_key(level, prev, from_quote.as_bytes(), learnt);
    let key = Key {
        from_quote,
        len: text.len(),
    };
    Ok((key, code))
}

/// Marks `bit` in `seen`; false (the duplicate recorded, see `raw::first_sighting`) if it was.
#[inline(always)]
fn first_time(seen: &mut u64, bit: u32, key: Key<'_>, problem: &mut Option<Box<Problem>>) -> bool {
    let mask = 1_u64 << bit;
    if *seen & mask != 0 {
        return first_sighting(seen, bit, key.text(), problem);
    }
    *seen |= mask;
    true
}

/// One top-level field (`code` from [`field_code`]), as `serde_reader::EventVisitor` reads it.
fn field<'de>(
    c: &mut Cursor<'de>,
    key: Key<'de>,
    code: u32,
    seen: &mut u64,
    ev: &mut RawEvent<'de>,
    memo: &mut Memo,
) -> Quick<()> {
    if code >= 16 {
        // As `raw::unread_field` records it.
        match code {
            UNKNOWN_FIELD => ev.unknown_fields.push(Cow::Borrowed(key.text())),
            unused => ev.unused_fields |= 1 << (unused - 16),
        }
        return c.skip_value(1);
    }
    let bit = code;
    if !first_time(seen, bit, key, &mut ev.problem) {
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
            args(c, &mut ev.args, memo)?;
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

/// A scalar read as `serde_reader::AnyVisitor` reads it: numbers and strings kept, `true`/`false`/`null`
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

/// `grid`/`block`: an array of scalars, as `serde_reader::Dim3Visitor` reads it.
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

/// The `args` object, as `serde_reader::ArgsVisitor` reads it. Runs of args whose values are arrays or
/// objects (an op's shapes and strides) are remembered as spans and, met again, done at once.
fn args<'de>(c: &mut Cursor<'de>, args: &mut Args<'de>, memo: &mut Memo) -> Quick<()> {
    c.expect(b'{')?;
    if c.peek()? == b'}' {
        c.pos += 1;
        return Ok(());
    }
    let mut seen = 0_u64;
    let mut prev = ARG_START;
    let mut run = Run::default();
    loop {
        c.peek()?;
        let quote = c.pos;
        let (key, code) = key(c, memo, 1, prev, arg_code)?;
        prev = code;
        if spanned(code) && matches!(c.peek()?, b'[' | b'{') {
            let replayed = run.args.is_empty()
                && match replay_span(c, quote, &mut seen, args, memo) {
                    Some(last) => {
                        prev = last;
                        true
                    }
                    None => false,
                };
            if !replayed {
                if run.args.is_empty() {
                    run.start = quote;
                }
                match span_arg(c, (run.start, quote), key, code, &mut seen, args, memo)? {
                    Some(arg) => {
                        run.args.push(arg);
                        run.end = c.pos;
                        if run.args.len() == SPAN_ARGS {
                            run.finish(c, memo);
                        }
                    }
                    None => run.finish(c, memo),
                }
            }
        } else {
            run.finish(c, memo);
            arg(c, key, code, &mut seen, args, memo)?;
        }
        match c.next()? {
            b',' => {}
            b'}' => {
                run.finish(c, memo);
                finish_args(args);
                return Ok(());
            }
            _ => return Err(GiveUp),
        }
    }
}

/// Whether an arg coded `code` may be part of a span: one gpuopt does not read, or a
/// `record_shapes` argument.
fn spanned(code: u32) -> bool {
    code >= 32 || (18..=21).contains(&code)
}

/// A run of spanned args being read: where its first key's quote is, where its last value ends,
/// and what each of its args did.
#[derive(Default)]
struct Run {
    start: usize,
    end: usize,
    args: Vec<SpanArg>,
}

impl Run {
    /// Remembers the run (two args or more) as a span and starts a new one.
    #[inline]
    fn finish(&mut self, c: &Cursor<'_>, memo: &mut Memo) {
        if self.args.is_empty() {
            return;
        }
        if self.args.len() >= 2 {
            if let Some(text) = c.text().get(self.start..) {
                memo.remember_span(text.as_bytes(), self.end - self.start, &self.args);
            }
        }
        self.args.clear();
    }
}

/// The remembered span at `quote` (the first key's opening quote), done at once: the same records,
/// bits and shapes reading its args one by one would give, and the cursor after its last value.
/// The code of its last arg; `None` (nothing done) when there is none, or when one of its
/// `record_shapes` args is already in the object (reading them one by one reports the duplicate).
fn replay_span<'de>(
    c: &mut Cursor<'de>,
    quote: usize,
    seen: &mut u64,
    args: &mut Args<'de>,
    memo: &mut Memo,
) -> Option<u32> {
    let text = c.text().get(quote..)?;
    let (len, span, count) = memo.find_span(text.as_bytes())?;
    let span = span.get(..count)?;
    if span
        .iter()
        .any(|a| a.code < 32 && *seen & (1_u64 << a.code) != 0)
    {
        return None;
    }
    let piece = |at: u32, len: u32| {
        text.get(at as usize..(at + len) as usize)
            .unwrap_or_default()
    };
    for a in span {
        match a.code {
            UNKNOWN_ARG => args.unknown.push(Cow::Borrowed(piece(a.key_at, a.key_len))),
            unused if unused >= 32 => args.unused |= 1 << (unused - 32),
            bit => {
                *seen |= 1_u64 << bit;
                set_shape(args, bit, piece(a.value_at, a.value_len), a.hash);
            }
        }
    }
    c.pos = quote + len;
    span.last().map(|a| a.code)
}

/// One spanned arg (see [`spanned`]), read as [`arg`] reads it, and what it did, with offsets from
/// `run_start` (`at` = (run start, this key's quote)); `None` when it was a duplicate (which ends
/// the run).
fn span_arg<'de>(
    c: &mut Cursor<'de>,
    (run_start, quote): (usize, usize),
    key: Key<'de>,
    code: u32,
    seen: &mut u64,
    args: &mut Args<'de>,
    memo: &mut Memo,
) -> Quick<Option<SpanArg>> {
    let value_at = c.pos;
    let hash = if code >= 32 {
        // As `arg` records an arg gpuopt does not read.
        match code {
            UNKNOWN_ARG => args.unknown.push(Cow::Borrowed(key.text())),
            unused => args.unused |= 1 << (unused - 32),
        }
        skipped(c, memo)?;
        0
    } else {
        if !first_time(seen, code, key, &mut args.problem) {
            c.skip_value(2)?;
            return Ok(None);
        }
        let (text, hash) = remembered(c, memo, code)?;
        set_shape(args, code, text, hash);
        hash
    };
    let offset = |at: usize| u32::try_from(at - run_start).ok();
    let arg = (|| {
        Some(SpanArg {
            code,
            key_at: offset(quote + 1)?,
            key_len: u32::try_from(key.len).ok()?,
            value_at: offset(value_at)?,
            value_len: u32::try_from(c.pos - value_at).ok()?,
            hash,
        })
    })();
    Ok(arg)
}

/// One arg (`code` from [`arg_code`]), as `serde_reader::ArgsVisitor` reads it.
fn arg<'de>(
    c: &mut Cursor<'de>,
    key: Key<'de>,
    code: u32,
    seen: &mut u64,
    args: &mut Args<'de>,
    memo: &mut Memo,
) -> Quick<()> {
    if code >= 32 {
        // As `raw::unread_arg` records it.
        match code {
            UNKNOWN_ARG => args.unknown.push(Cow::Borrowed(key.text())),
            unused => args.unused |= 1 << (unused - 32),
        }
        return skipped(c, memo);
    }
    let bit = code;
    if !first_time(seen, bit, key, &mut args.problem) {
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
        18..=21 => {
            let (text, hash) = remembered(c, memo, bit)?;
            set_shape(args, bit, text, hash);
        }
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

/// The memo's key for the values of args gpuopt does not read (any other key is an `arg_bit`).
const UNREAD: u32 = 64;

/// Skips the value of an arg gpuopt does not read (an array or object through `memo`).
#[inline]
fn skipped(c: &mut Cursor<'_>, memo: &mut Memo) -> Quick<()> {
    if matches!(c.peek()?, b'[' | b'{') {
        container(c, memo, UNREAD, false).map(|_| ())
    } else {
        c.skip_value(2)
    }
}

/// The text of an arg's value (checked as [`Cursor::raw_value`] checks it) and its [`text_hash`].
#[inline]
fn remembered<'de>(c: &mut Cursor<'de>, memo: &mut Memo, key: u32) -> Quick<(&'de str, u64)> {
    if matches!(c.peek()?, b'[' | b'{') {
        return container(c, memo, key, true);
    }
    let text = c.raw_value(2)?;
    Ok((text, text_hash(text.as_bytes())))
}

/// An array or object at the cursor: found in `memo`, or scanned and remembered. Its hash is
/// computed only when `hashed` (a value remembered without one is found with hash 0).
fn container<'de>(
    c: &mut Cursor<'de>,
    memo: &mut Memo,
    key: u32,
    hashed: bool,
) -> Quick<(&'de str, u64)> {
    let rest = c.rest();
    if let Some((len, hash)) = memo.find(key, rest.as_bytes()) {
        c.pos += len;
        return rest.get(..len).map(|text| (text, hash)).ok_or(GiveUp);
    }
    let text = c.raw_value(2)?;
    let hash = if hashed {
        text_hash(text.as_bytes())
    } else {
        0
    };
    memo.remember(key, rest.as_bytes(), text.len(), hash);
    Ok((text, hash))
}
