//! A streaming writer of Perfetto's protobuf trace format (`perfetto.protos.Trace`: a sequence of
//! `TracePacket`s): named tracks (`TrackDescriptor`), slices as `TYPE_SLICE_BEGIN`/`TYPE_SLICE_END`
//! track events with debug annotations and flows, instants and counters. Event and argument
//! names are interned per sequence (`InternedData`), so a name repeated a million times is
//! written once. Packets go to the output as they are made; memory holds only the interning
//! tables.

use super::wire::Message;
use crate::error::{Error, Result};
use crate::fxhash::FxHashMap;
use std::io::Write;

// Field numbers (protos/perfetto/trace/...; `tests/test_perfetto_export.py` checks each against
// the .proto files).
/// `Trace.packet` is field 1, length-delimited: the tag byte (1 << 3) | 2.
const PACKET_TAG: u8 = 0x0a;
mod packet {
    pub const TIMESTAMP: u32 = 8;
    pub const SEQUENCE_ID: u32 = 10;
    pub const TRACK_EVENT: u32 = 11;
    pub const INTERNED_DATA: u32 = 12;
    pub const SEQUENCE_FLAGS: u32 = 13;
    pub const TRACK_DESCRIPTOR: u32 = 60;
    pub const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
    pub const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;
}
mod track {
    pub const UUID: u32 = 1;
    pub const NAME: u32 = 2;
    pub const PROCESS: u32 = 3;
    pub const THREAD: u32 = 4;
    pub const PARENT_UUID: u32 = 5;
    pub const COUNTER: u32 = 8;
    pub const PROCESS_PID: u32 = 1;
    pub const PROCESS_NAME: u32 = 6;
    pub const THREAD_PID: u32 = 1;
    pub const THREAD_TID: u32 = 2;
    pub const THREAD_NAME: u32 = 5;
}
mod event {
    pub const DEBUG_ANNOTATIONS: u32 = 4;
    pub const TYPE: u32 = 9;
    pub const NAME_IID: u32 = 10;
    pub const TRACK_UUID: u32 = 11;
    pub const COUNTER_VALUE: u32 = 30;
    pub const DOUBLE_COUNTER_VALUE: u32 = 44;
    pub const FLOW_IDS: u32 = 47;
    pub const TERMINATING_FLOW_IDS: u32 = 48;
    pub const SLICE_BEGIN: u64 = 1;
    pub const SLICE_END: u64 = 2;
    pub const INSTANT: u64 = 3;
    pub const COUNTER: u64 = 4;
}
mod annotation {
    pub const NAME_IID: u32 = 1;
    pub const BOOL: u32 = 2;
    pub const INT: u32 = 4;
    pub const DOUBLE: u32 = 5;
    pub const STRING: u32 = 6;
}
mod interned {
    pub const EVENT_NAMES: u32 = 2;
    pub const ANNOTATION_NAMES: u32 = 3;
    pub const IID: u32 = 1;
    pub const NAME: u32 = 2;
}

/// One debug annotation's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Int(i64),
    Float(f64),
    Text(&'a str),
    Bool(bool),
}

/// What a track describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A named track (a GPU stream, a fact track), under `parent` when given.
    Plain,
    /// A process (its name shown as the track group's name).
    Process { pid: i64 },
    /// A thread of a process.
    Thread { pid: i64, tid: i64 },
    /// A counter track.
    Counter,
}

/// What was written.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Written {
    pub packets: u64,
    pub tracks: u64,
    pub slices: u64,
    pub instants: u64,
    pub counters: u64,
    pub flows: u64,
    pub bytes: u64,
}

pub struct Writer<W: Write> {
    out: W,
    next_uuid: u64,
    names: FxHashMap<String, u64>,
    arg_names: FxHashMap<&'static str, u64>,
    started: bool,
    packet: Message,
    event: Message,
    scratch: Message,
    fresh: Message,
    arg: Message,
    pub written: Written,
}

const SEQUENCE: u64 = 1;

fn io(e: &std::io::Error) -> Error {
    Error::input(
        "output_unwritable",
        format!("cannot write the Perfetto trace: {e}"),
    )
}

/// Clamps a relative time to the unsigned timestamps Perfetto takes (times before the first
/// event of a file are not written by the exporters, so nothing is clamped in practice).
fn ts(t: i64) -> u64 {
    u64::try_from(t).unwrap_or(0)
}

impl<W: Write> Writer<W> {
    pub fn new(out: W) -> Self {
        Writer {
            out,
            next_uuid: 1,
            names: FxHashMap::default(),
            arg_names: FxHashMap::default(),
            started: false,
            packet: Message::new(),
            event: Message::new(),
            scratch: Message::new(),
            fresh: Message::new(),
            arg: Message::new(),
            written: Written::default(),
        }
    }

    fn emit(&mut self) -> Result<()> {
        // The packet's tag and length, then the packet: written through the buffered output.
        let mut head = [PACKET_TAG, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let len = self.packet.buf.len() as u64;
        let mut n = 1;
        let mut v = len;
        while let Some(slot) = head.get_mut(n) {
            #[allow(clippy::cast_possible_truncation)]
            let low = (v & 0x7f) as u8;
            v >>= 7;
            n += 1;
            if v == 0 {
                *slot = low;
                break;
            }
            *slot = low | 0x80;
        }
        let head = head.get(..n).unwrap_or_default();
        self.out.write_all(head).map_err(|e| io(&e))?;
        self.out.write_all(&self.packet.buf).map_err(|e| io(&e))?;
        self.written.packets += 1;
        self.written.bytes += n as u64 + len;
        Ok(())
    }

    /// Starts a packet on the one sequence: the first packet clears the incremental state (the
    /// interning tables), the others depend on it.
    fn start_packet(&mut self) {
        self.packet.clear();
        self.packet.uint(packet::SEQUENCE_ID, SEQUENCE);
        let flags = if self.started {
            packet::SEQ_NEEDS_INCREMENTAL_STATE
        } else {
            packet::SEQ_INCREMENTAL_STATE_CLEARED
        };
        self.packet.uint(packet::SEQUENCE_FLAGS, flags);
        self.started = true;
    }

    /// A new track; returns its uuid.
    pub fn track(&mut self, parent: Option<u64>, name: &str, kind: Kind) -> Result<u64> {
        let uuid = self.next_uuid;
        self.next_uuid += 1;
        self.start_packet();
        let mut d = Message::new();
        d.uint(track::UUID, uuid);
        if !name.is_empty() {
            d.string(track::NAME, name);
        }
        if let Some(parent) = parent {
            d.uint(track::PARENT_UUID, parent);
        }
        match kind {
            Kind::Plain => {}
            Kind::Process { pid } => {
                let mut p = Message::new();
                p.int(track::PROCESS_PID, pid);
                if !name.is_empty() {
                    p.string(track::PROCESS_NAME, name);
                }
                d.message(track::PROCESS, &p);
            }
            Kind::Thread { pid, tid } => {
                let mut t = Message::new();
                t.int(track::THREAD_PID, pid).int(track::THREAD_TID, tid);
                if !name.is_empty() {
                    t.string(track::THREAD_NAME, name);
                }
                d.message(track::THREAD, &t);
            }
            Kind::Counter => {
                d.message(track::COUNTER, &Message::new());
            }
        }
        self.packet.message(packet::TRACK_DESCRIPTOR, &d);
        self.emit()?;
        self.written.tracks += 1;
        Ok(uuid)
    }

    /// The iid of an event name, adding it to this packet's interned data when new.
    fn name_iid(&mut self, name: &str) -> u64 {
        if let Some(&iid) = self.names.get(name) {
            return iid;
        }
        let iid = self.names.len() as u64 + 1;
        self.names.insert(name.to_owned(), iid);
        self.scratch.clear();
        self.scratch
            .uint(interned::IID, iid)
            .string(interned::NAME, name);
        let entry = std::mem::take(&mut self.scratch);
        self.fresh.message(interned::EVENT_NAMES, &entry);
        self.scratch = entry;
        iid
    }

    fn arg_iid(&mut self, name: &'static str) -> u64 {
        if let Some(&iid) = self.arg_names.get(name) {
            return iid;
        }
        let iid = self.arg_names.len() as u64 + 1;
        self.arg_names.insert(name, iid);
        self.scratch.clear();
        self.scratch
            .uint(interned::IID, iid)
            .string(interned::NAME, name);
        let entry = std::mem::take(&mut self.scratch);
        self.fresh.message(interned::ANNOTATION_NAMES, &entry);
        self.scratch = entry;
        iid
    }

    fn annotate(&mut self, args: &[(&'static str, Value<'_>)]) {
        for (name, value) in args {
            let iid = self.arg_iid(name);
            let mut a = std::mem::take(&mut self.arg);
            a.clear();
            a.uint(annotation::NAME_IID, iid);
            match value {
                Value::Int(v) => a.int(annotation::INT, *v),
                Value::Float(v) => a.double(annotation::DOUBLE, *v),
                Value::Text(v) => a.string(annotation::STRING, v),
                Value::Bool(v) => a.boolean(annotation::BOOL, *v),
            };
            self.event.message(event::DEBUG_ANNOTATIONS, &a);
            self.arg = a;
        }
    }

    fn event_packet(&mut self, at: i64) -> Result<()> {
        self.start_packet();
        self.packet.uint(packet::TIMESTAMP, ts(at));
        let ev = std::mem::take(&mut self.event);
        self.packet.message(packet::TRACK_EVENT, &ev);
        self.event = ev;
        if !self.fresh.buf.is_empty() {
            let fresh = std::mem::take(&mut self.fresh);
            self.packet.message(packet::INTERNED_DATA, &fresh);
            self.fresh = fresh;
            self.fresh.clear();
        }
        self.emit()
    }

    /// Opens a slice on `track` at `at`; `flows` start or continue flows, `ends` terminate them.
    pub fn begin(
        &mut self,
        track: u64,
        at: i64,
        name: &str,
        args: &[(&'static str, Value<'_>)],
        flows: &[u64],
        ends: &[u64],
    ) -> Result<()> {
        self.event.clear();
        self.event
            .uint(event::TYPE, event::SLICE_BEGIN)
            .uint(event::TRACK_UUID, track);
        let iid = self.name_iid(name);
        self.event.uint(event::NAME_IID, iid);
        self.annotate(args);
        for &f in flows {
            self.event.fixed64(event::FLOW_IDS, f);
        }
        for &f in ends {
            self.event.fixed64(event::TERMINATING_FLOW_IDS, f);
        }
        self.written.flows += flows.len() as u64;
        self.written.slices += 1;
        self.event_packet(at)
    }

    /// Closes the innermost open slice of `track` at `at`.
    pub fn end(&mut self, track: u64, at: i64) -> Result<()> {
        self.event.clear();
        self.event
            .uint(event::TYPE, event::SLICE_END)
            .uint(event::TRACK_UUID, track);
        self.event_packet(at)
    }

    pub fn instant(
        &mut self,
        track: u64,
        at: i64,
        name: &str,
        args: &[(&'static str, Value<'_>)],
    ) -> Result<()> {
        self.event.clear();
        self.event
            .uint(event::TYPE, event::INSTANT)
            .uint(event::TRACK_UUID, track);
        let iid = self.name_iid(name);
        self.event.uint(event::NAME_IID, iid);
        self.annotate(args);
        self.written.instants += 1;
        self.event_packet(at)
    }

    pub fn counter(&mut self, track: u64, at: i64, value: f64) -> Result<()> {
        self.event.clear();
        self.event
            .uint(event::TYPE, event::COUNTER)
            .uint(event::TRACK_UUID, track);
        if value.fract() == 0.0 && value.abs() < 9.0e15 {
            // Integral values as integers (exact in the UI's tooltips).
            #[allow(clippy::cast_possible_truncation)]
            self.event.int(event::COUNTER_VALUE, value as i64);
        } else {
            self.event.double(event::DOUBLE_COUNTER_VALUE, value);
        }
        self.written.counters += 1;
        self.event_packet(at)
    }

    /// Flushes the output and returns what was written.
    pub fn finish(mut self) -> Result<(W, Written)> {
        self.out.flush().map_err(|e| io(&e))?;
        Ok((self.out, self.written))
    }
}
