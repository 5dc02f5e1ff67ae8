//! The fast path of the trace reader (`reader`): `traceEvents` read block by block, each block's
//! events parsed in parallel segments (`segments`) while the next block is read into the room in
//! front of it.

use super::events::Events;
use super::framer::{Framer, Sizes};
use super::memo::Memos;
use super::segments::{self, End, Walked};
use crate::error::Result;
use std::io::Read;

impl<R: Read + Send> Framer<R> {
    /// The fast path (`segments`): block after block until the array closes (`None`), or until
    /// something it does not vouch for; then the index of the event at `pos`, where the framing
    /// path takes over.
    pub(super) fn events_fast(&mut self, events: &mut Events) -> Result<Option<u64>> {
        let mut index = 0_u64;
        let Sizes {
            block: block_size,
            segment,
            gap,
            ..
        } = self.sizes;
        let mut want = block_size;
        // The next block: `gap` bytes of room, then what was read while the pool parsed.
        let mut ahead: Vec<u8> = Vec::new();
        let memos = Memos::default();
        loop {
            while self.buf.len() - self.pos < want && self.fill()? {}
            let Framer {
                reader,
                buf,
                pos,
                eof,
                pending,
                ..
            } = self;
            let block = buf.get(*pos..).unwrap_or_default();
            ahead.clear();
            ahead.resize(gap, 0);
            let read_ahead = || {
                if !*eof && pending.is_none() {
                    // Bytes read before an error stay in `ahead`; the error waits for `fill`.
                    match reader
                        .by_ref()
                        .take(block_size as u64)
                        .read_to_end(&mut ahead)
                    {
                        Ok(0) => *eof = true,
                        Ok(_) => {}
                        Err(e) => *pending = Some(e),
                    }
                }
            };
            // Each segment checks its own bytes are UTF-8. A block may end inside a multi-byte
            // character: the event holding it is read again with the next block. A byte that is
            // not UTF-8 at all (`broken`) is left to the framing path, which names it.
            let Walked { end, added, broken } =
                segments::round(block, 0, segment, &memos, events, read_ahead);
            index += added;
            let grown = self.take_ahead(self.pos + end.offset(), &mut ahead);
            want = block_size;
            match end {
                End::Next(_) => {}
                End::Closed(_) => return Ok(None),
                End::Incomplete(at) if (grown || !self.eof) && !broken => {
                    // One event longer than the block: read twice as much before trying again
                    // (doubling keeps the re-parses of a huge event linear in its size).
                    // Never past the most the buffer may hold (`Sizes::longest`).
                    if at == 0 {
                        self.room_left()?;
                        want = (self.buf.len() - self.pos)
                            .saturating_mul(2)
                            .max(block_size)
                            .min(self.sizes.longest);
                    }
                }
                End::Incomplete(_) | End::Anomaly(_) => return Ok(Some(index)),
            }
        }
    }

    /// Moves on to `at` (an index into `buf`) with the bytes read ahead after the buffer's end: the
    /// bytes from `at` are copied into the room in front of them, and that buffer becomes `buf`.
    /// True when bytes were added.
    pub(super) fn take_ahead(&mut self, at: usize, ahead: &mut Vec<u8>) -> bool {
        let gap = self.sizes.gap;
        let read = ahead.len().saturating_sub(gap);
        let tail = self.buf.get(at..).unwrap_or_default();
        let start = gap.saturating_sub(tail.len());
        let base = (self.base + at as u64).checked_sub(start as u64);
        match (base, ahead.get_mut(start..gap)) {
            (Some(base), Some(room)) if read > 0 && room.len() == tail.len() => {
                room.copy_from_slice(tail);
                std::mem::swap(&mut self.buf, ahead);
                self.base = base;
                self.pos = start;
            }
            _ => {
                self.pos = at;
                if read > 0 {
                    self.compact();
                    self.buf
                        .extend_from_slice(ahead.get(gap..).unwrap_or_default());
                }
            }
        }
        read > 0
    }
}
