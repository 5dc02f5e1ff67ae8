//! Names and shape records interned once per trace: events refer to them by id.

use super::raw::ShapesRaw;
use super::records::{FastMap, NONE};
use std::borrow::Cow;
use std::collections::HashMap;

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
    pub(super) fn absorb(&mut self, part: &Shapes) -> Vec<u32> {
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
