//! NVTX ranges as loaded from `NVTX_EVENTS`, with domain and text resolution (the sums and the
//! attribution over them are in `nvtx/`; `select.rs` resolves `--nvtx` from these ranges).
//!
//! Resolution rules (those of `nsys stats`): a range's text is the `StringIds` value of `textId` when
//! set, else the inline `text`, else empty. Its domain is the name of the domain-create event (type 75)
//! with the same `domainId` in the same process, else empty. A range is tagged `DOMAIN:TEXT`, so the
//! default domain prints as `:TEXT`. Open ranges (`end` NULL) are closed at the latest timestamp of the
//! NVTX table (`nvtx_sum`) or of its range events (`nvtx_kern_sum`).

use super::db;
use super::hash::IdMap;
use super::scan;
use super::schema::{Schema, NVTX};
use super::strings::Strings;
use crate::error::Result;
use std::collections::BTreeMap;

const PUSHPOP: i64 = 59;
const STARTEND: i64 = 60;
const NVTXT_PUSHPOP: i64 = 70;
const NVTXT_STARTEND: i64 = 71;
const DOMAIN_CREATE: i64 = 75;
/// [`Range`]'s `end` of an open range (no checked interval ends there: ends are not below starts).
const OPEN: i64 = i64::MIN;
/// The process bits of a `globalTid` as the domain join compares them.
const DOMAIN_PID_MASK: i64 = 0x0000_FFFF_FF00_0000;

/// One NVTX range event (48 bytes: an export may hold tens of millions; texts and tags are
/// interned).
#[derive(Debug, Clone)]
pub struct Range {
    pub rowid: i64,
    pub start: i64,
    /// `end`, or [`OPEN`] for an open range (read through [`Range::end`]).
    end: i64,
    pub tid: i64,
    /// Index into [`NvtxData::tags`].
    pub tag: u32,
    /// Index into [`NvtxData::texts`].
    pub text: u32,
    pub event_type: u8,
    /// Ends on the thread it started on (`endGlobalTid` NULL).
    same_thread: bool,
}

impl Range {
    pub fn style(&self) -> &'static str {
        match i64::from(self.event_type) {
            PUSHPOP | NVTXT_PUSHPOP => "PushPop",
            STARTEND | NVTXT_STARTEND => "StartEnd",
            _ => "Unknown",
        }
    }

    pub fn is_pushpop(&self) -> bool {
        matches!(i64::from(self.event_type), PUSHPOP | NVTXT_PUSHPOP)
    }

    /// Ends on the thread it started on (`endGlobalTid` NULL), as `nvtx_kern_sum` requires.
    /// The end timestamp; None for a range still open when the capture ended.
    pub fn end(&self) -> Option<i64> {
        (self.end != OPEN).then_some(self.end)
    }

    pub fn same_thread(&self) -> bool {
        self.same_thread
    }
}

/// The NVTX ranges of an export.
#[derive(Debug, Default)]
pub struct NvtxData {
    pub present: bool,
    pub ranges: Vec<Range>,
    pub tags: Vec<String>,
    pub texts: Vec<String>,
    /// Latest start or end of any NVTX event (closes open ranges for `nvtx_sum`).
    pub max_any: i64,
    /// Latest start or end of any range event (closes open ranges for `nvtx_kern_sum`).
    pub max_ranges: i64,
    pub open_ranges: usize,
}

impl NvtxData {
    pub fn close_for_sum(&self, end: Option<i64>) -> i64 {
        end.unwrap_or(self.max_any)
    }

    pub fn close_for_kernels(&self, end: Option<i64>) -> i64 {
        end.unwrap_or(self.max_ranges)
    }

    pub fn tag(&self, r: &Range) -> &str {
        usize::try_from(r.tag)
            .ok()
            .and_then(|i| self.tags.get(i))
            .map_or("", String::as_str)
    }

    pub fn text(&self, r: &Range) -> &str {
        usize::try_from(r.text)
            .ok()
            .and_then(|i| self.texts.get(i))
            .map_or("", String::as_str)
    }

    /// A range matches a requested name by its full tag (`DOMAIN:TEXT`) or by its text alone.
    pub fn matches(&self, r: &Range, name: &str) -> bool {
        self.tag(r) == name || self.text(r) == name
    }
}

/// One scan worker's range events, with texts and domain keys of its own (remapped on merge).
#[derive(Default)]
struct Part {
    ranges: Vec<Range>,
    /// Per range (same order): index into `domain_keys`.
    domain_of: Vec<u32>,
    texts: Vec<String>,
    text_index: IdMap<String, u32>,
    domain_keys: Vec<(i64, i64)>,
    domain_index: IdMap<(i64, i64), u32>,
    /// Domain-create events: (domainId, process bits) → (earliest start, text).
    domains: BTreeMap<(i64, i64), (i64, String)>,
    max_any: Option<i64>,
    max_ranges: Option<i64>,
}

fn intern_in<K: std::hash::Hash + Eq + Clone>(
    index: &mut IdMap<K, u32>,
    values: &mut Vec<K>,
    value: K,
) -> u32 {
    if let Some(&i) = index.get(&value) {
        return i;
    }
    let next = u32::try_from(values.len()).unwrap_or(u32::MAX);
    values.push(value.clone());
    index.insert(value, next);
    next
}

/// Loads the range and domain events of `NVTX_EVENTS` (an absent table gives no ranges) in one
/// parallel scan that interns each text as it reads it: no row is held with its own text.
pub fn load(schema: &Schema, strings: &Strings) -> Result<NvtxData> {
    let Some(table) = schema.table(&NVTX) else {
        return Ok(NvtxData::default());
    };
    let name = table.actual.clone();
    let columns = [
        "rowid",
        "start",
        "end",
        "eventType",
        "globalTid",
        "endGlobalTid",
        "textId",
        "text",
        "domainId",
    ];
    let parts = scan::scan(
        schema,
        table,
        &columns,
        Part::default,
        |p: &mut Part, row| {
            let start = row.opt_int(1)?;
            let end = row.opt_int(2)?;
            for t in [start, end].into_iter().flatten() {
                p.max_any = Some(p.max_any.map_or(t, |m| m.max(t)));
            }
            let event_type = row.opt_int(3)?;
            let Some(
                event_type @ (PUSHPOP | STARTEND | NVTXT_PUSHPOP | NVTXT_STARTEND | DOMAIN_CREATE),
            ) = event_type
            else {
                return Ok(());
            };
            let start = row.int(1)?;
            if event_type != DOMAIN_CREATE {
                for t in [Some(start), end].into_iter().flatten() {
                    p.max_ranges = Some(p.max_ranges.map_or(t, |m| m.max(t)));
                }
            }
            let rowid = row.int(0)?;
            let tid = row.opt_int(4)?.unwrap_or(0);
            let end_tid = row.opt_int(5)?;
            let domain_key = (row.opt_int(8)?.unwrap_or(0), tid & DOMAIN_PID_MASK);
            if event_type == DOMAIN_CREATE {
                let text = match row.opt_int(6)? {
                    Some(id) => strings
                        .value(strings.resolve(id, &name, "textId")?)
                        .to_string(),
                    None => row.opt_text(7).unwrap_or_default(),
                };
                let entry = p.domains.entry(domain_key).or_insert((start, text.clone()));
                if start < entry.0 {
                    *entry = (start, text);
                }
                return Ok(());
            }
            // An open range is checked as an empty one at its start; it closes at a checked timestamp.
            db::check_interval(&name, Some(rowid), start, end.unwrap_or(start))?;
            let text = match row.opt_int(6)? {
                Some(id) => {
                    let s = strings.value(strings.resolve(id, &name, "textId")?);
                    match p.text_index.get(s) {
                        Some(&i) => i,
                        None => intern_in(&mut p.text_index, &mut p.texts, s.to_string()),
                    }
                }
                None => {
                    let s = row.opt_text(7).unwrap_or_default();
                    intern_in(&mut p.text_index, &mut p.texts, s)
                }
            };
            let domain = intern_in(&mut p.domain_index, &mut p.domain_keys, domain_key);
            p.domain_of.push(domain);
            p.ranges.push(Range {
                rowid,
                start,
                end: end.unwrap_or(OPEN),
                tid,
                tag: 0,
                text,
                event_type: u8::try_from(event_type).unwrap_or(0),
                same_thread: end_tid.is_none(),
            });
            Ok(())
        },
    )?;
    merge(&name, parts)
}

/// Joins the workers' parts: ranges in rowid order, texts and tags interned once, each range tagged
/// `DOMAIN:TEXT` by the earliest create event of its domain in its process.
fn merge(name: &str, parts: Vec<Part>) -> Result<NvtxData> {
    let mut domains: BTreeMap<(i64, i64), (i64, String)> = BTreeMap::new();
    let (mut max_any, mut max_ranges): (Option<i64>, Option<i64>) = (None, None);
    for p in &parts {
        for (key, (start, text)) in &p.domains {
            let entry = domains.entry(*key).or_insert((*start, text.clone()));
            if *start < entry.0 {
                *entry = (*start, text.clone());
            }
        }
        max_any = max_any.max(p.max_any);
        max_ranges = max_ranges.max(p.max_ranges);
    }
    let (max_any, max_ranges) = (max_any.unwrap_or(0), max_ranges.unwrap_or(0));
    for close in [max_any, max_ranges] {
        db::check_interval(name, None, close, close)?;
    }
    let mut data = NvtxData {
        present: true,
        max_any,
        max_ranges,
        ..NvtxData::default()
    };
    data.ranges
        .reserve(parts.iter().map(|p| p.ranges.len()).sum());
    let mut text_index: IdMap<String, u32> = IdMap::default();
    let mut tag_index: IdMap<String, u32> = IdMap::default();
    // (domain key, text index) → tag index.
    let mut tag_of: IdMap<((i64, i64), u32), u32> = IdMap::default();
    for p in parts {
        let texts: Vec<u32> = p
            .texts
            .into_iter()
            .map(|t| intern_in(&mut text_index, &mut data.texts, t))
            .collect();
        for (mut r, d) in p.ranges.into_iter().zip(p.domain_of) {
            if r.end().is_none() {
                data.open_ranges += 1;
            }
            r.text = texts.get(r.text as usize).copied().unwrap_or(0);
            let key = p.domain_keys.get(d as usize).copied().unwrap_or_default();
            r.tag = match tag_of.get(&(key, r.text)) {
                Some(&t) => t,
                None => {
                    let domain = domains.get(&key).map_or("", |(_, d)| d.as_str());
                    let text = data.texts.get(r.text as usize).map_or("", String::as_str);
                    let t = intern_in(&mut tag_index, &mut data.tags, format!("{domain}:{text}"));
                    tag_of.insert((key, r.text), t);
                    t
                }
            };
            data.ranges.push(r);
        }
    }
    Ok(data)
}
