//! One logical track (a thread, a GPU stream, a fact) whose slices may not nest properly: each
//! slice goes to the first lane where it nests (inside the innermost open slice, after every closed
//! one), and a lane is a track of its own (`NAME`, `NAME (2)`, ...), so every written track holds
//! properly nested slices, which Perfetto requires of a track's begin/end events.
//!
//! Slices in order of start (longer first at equal starts) fill as few lanes as nesting allows;
//! slices in any other order still land on a lane where they nest (checked against the lane's open
//! slices and the end of its last closed one), only on more lanes.

use super::writer::{Kind, Value, Writer};
use crate::error::Result;
use std::io::Write;

pub struct Lanes {
    name: String,
    parent: Option<u64>,
    kind: Kind,
    tracks: Vec<u64>,
    /// Per lane: `(start, end)` of its open slices, innermost last.
    stacks: Vec<Vec<(i64, i64)>>,
    /// Per lane: the latest end of a slice it closed.
    closed: Vec<i64>,
}

/// A slice to place.
pub struct Slice<'a> {
    pub start: i64,
    pub end: i64,
    pub name: &'a str,
    pub args: &'a [(&'static str, Value<'a>)],
    pub flows: &'a [u64],
    pub ends: &'a [u64],
}

impl Lanes {
    /// Lanes of a track named `name`; the first lane is of `kind`, the others plain tracks under
    /// `parent`.
    pub fn new(name: impl Into<String>, parent: Option<u64>, kind: Kind) -> Self {
        Lanes {
            name: name.into(),
            parent,
            kind,
            tracks: Vec::new(),
            stacks: Vec::new(),
            closed: Vec::new(),
        }
    }

    /// The first lane's track uuid (made now if no slice made it yet).
    pub fn first<W: Write>(&mut self, w: &mut Writer<W>) -> Result<u64> {
        self.lane(w, 0)
    }

    fn lane<W: Write>(&mut self, w: &mut Writer<W>, i: usize) -> Result<u64> {
        while self.tracks.len() <= i {
            let n = self.tracks.len();
            let uuid = if n == 0 {
                w.track(self.parent, &self.name, self.kind)?
            } else {
                w.track(
                    self.parent,
                    &format!("{} ({})", self.name, n + 1),
                    Kind::Plain,
                )?
            };
            self.tracks.push(uuid);
            self.stacks.push(Vec::new());
            self.closed.push(i64::MIN);
        }
        Ok(self.tracks.get(i).copied().unwrap_or(0))
    }

    /// Places one slice.
    pub fn slice<W: Write>(&mut self, w: &mut Writer<W>, s: &Slice<'_>) -> Result<()> {
        let mut i = 0;
        loop {
            let track = self.lane(w, i)?;
            let (Some(stack), Some(closed)) = (self.stacks.get_mut(i), self.closed.get_mut(i))
            else {
                return Ok(());
            };
            while let Some(&(start, end)) = stack.last() {
                if end > s.start || start > s.start {
                    break;
                }
                w.end(track, end)?;
                *closed = (*closed).max(end);
                stack.pop();
            }
            let nests = stack
                .last()
                .is_none_or(|&(start, end)| start <= s.start && end >= s.end);
            if !nests || *closed > s.start {
                i += 1;
                continue;
            }
            stack.push((s.start, s.end));
            return w.begin(track, s.start, s.name, s.args, s.flows, s.ends);
        }
    }

    /// Closes every open slice.
    pub fn close<W: Write>(&mut self, w: &mut Writer<W>) -> Result<()> {
        for (track, stack) in self.tracks.iter().zip(self.stacks.iter_mut()) {
            while let Some((_, end)) = stack.pop() {
                w.end(*track, end)?;
            }
        }
        Ok(())
    }
}
