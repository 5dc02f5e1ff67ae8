//! NVTX ranges as loaded from `NVTX_EVENTS`, with domain and text resolution (the sums and the
//! attribution over them are in `nvtx.rs`; `select.rs` resolves `--nvtx` from these ranges).
//!
//! Resolution rules (those of `nsys stats`): a range's text is the `StringIds` value of `textId` when
//! set, else the inline `text`, else empty. Its domain is the name of the domain-create event (type 75)
//! with the same `domainId` in the same process, else empty. A range is tagged `DOMAIN:TEXT`, so the
//! default domain prints as `:TEXT`. Open ranges (`end` NULL) are closed at the latest timestamp of the
//! NVTX table (`nvtx_sum`) or of its range events (`nvtx_kern_sum`).

use super::db;
use super::schema::{Schema, NVTX};
use super::strings::Strings;
use crate::error::Result;
use std::collections::BTreeMap;

const PUSHPOP: i64 = 59;
const STARTEND: i64 = 60;
const NVTXT_PUSHPOP: i64 = 70;
const NVTXT_STARTEND: i64 = 71;
const DOMAIN_CREATE: i64 = 75;
/// The process bits of a `globalTid` as the domain join compares them.
const DOMAIN_PID_MASK: i64 = 0x0000_FFFF_FF00_0000;

/// One NVTX range event.
#[derive(Debug, Clone)]
pub struct Range {
    pub rowid: i64,
    pub start: i64,
    pub end: Option<i64>,
    pub event_type: i64,
    pub tid: i64,
    pub end_tid: Option<i64>,
    /// Index into [`NvtxData::tags`].
    pub tag: u32,
    /// Index into [`NvtxData::texts`].
    pub text: u32,
}

impl Range {
    pub fn style(&self) -> &'static str {
        match self.event_type {
            PUSHPOP | NVTXT_PUSHPOP => "PushPop",
            STARTEND | NVTXT_STARTEND => "StartEnd",
            _ => "Unknown",
        }
    }

    pub fn is_pushpop(&self) -> bool {
        matches!(self.event_type, PUSHPOP | NVTXT_PUSHPOP)
    }

    /// Ends on the thread it started on (`endGlobalTid` NULL), as `nvtx_kern_sum` requires.
    pub fn same_thread(&self) -> bool {
        self.end_tid.is_none()
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

struct Raw {
    rowid: i64,
    start: i64,
    end: Option<i64>,
    event_type: i64,
    tid: i64,
    end_tid: Option<i64>,
    text_id: Option<i64>,
    text: Option<String>,
    domain: Option<i64>,
}

/// Loads the range and domain events of `NVTX_EVENTS` (an absent table gives no ranges).
pub fn load(schema: &Schema, strings: &Strings) -> Result<NvtxData> {
    let Some(table) = schema.table(&NVTX) else {
        return Ok(NvtxData::default());
    };
    let name = table.actual.clone();
    let conn = schema.connect()?;
    let (max_any, max_ranges) = conn
        .query_row(
            &format!(
                "SELECT max(start), max(end), \
                 (SELECT max(start) FROM \"{name}\" WHERE eventType IN (59, 60, 70, 71)), \
                 (SELECT max(end) FROM \"{name}\" WHERE eventType IN (59, 60, 70, 71)) FROM \"{name}\""
            ),
            [],
            |r| {
                let v: [Option<i64>; 4] = [r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?];
                Ok((v[0].max(v[1]).unwrap_or(0), v[2].max(v[3]).unwrap_or(0)))
            },
        )
        .map_err(|e| db::sql_error(&e, &schema.path))?;
    let raws = db::query_on(
        &conn,
        &schema.path,
        &format!(
            "SELECT rowid, start, end, eventType, globalTid, endGlobalTid, textId, text, domainId \
             FROM \"{name}\" WHERE eventType IN (59, 60, 70, 71, 75)"
        ),
        &mut |row| {
            Ok(Raw {
                rowid: db::int(row, 0, &name, "rowid")?,
                start: db::int(row, 1, &name, "start")?,
                end: db::opt_int(row, 2, &name, "end")?,
                event_type: db::int(row, 3, &name, "eventType")?,
                tid: db::opt_int(row, 4, &name, "globalTid")?.unwrap_or(0),
                end_tid: db::opt_int(row, 5, &name, "endGlobalTid")?,
                text_id: db::opt_int(row, 6, &name, "textId")?,
                text: db::opt_text(row, 7)?,
                domain: db::opt_int(row, 8, &name, "domainId")?,
            })
        },
    )?;
    let text_of = |r: &Raw| -> Result<String> {
        match r.text_id {
            Some(id) => Ok(strings
                .value(strings.resolve(id, &name, "textId")?)
                .to_string()),
            None => Ok(r.text.clone().unwrap_or_default()),
        }
    };
    // Domain names: the earliest create event per (domainId, thread), looked up per process.
    let mut domains: BTreeMap<(i64, i64), (i64, String)> = BTreeMap::new();
    for r in raws.iter().filter(|r| r.event_type == DOMAIN_CREATE) {
        let key = (r.domain.unwrap_or(0), r.tid & DOMAIN_PID_MASK);
        let text = text_of(r)?;
        let entry = domains.entry(key).or_insert((r.start, text.clone()));
        if r.start < entry.0 {
            *entry = (r.start, text);
        }
    }
    for close in [max_any, max_ranges] {
        db::check_interval(&name, None, close, close)?;
    }
    let mut data = NvtxData {
        present: true,
        max_any,
        max_ranges,
        ..NvtxData::default()
    };
    let mut tag_index: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    let mut text_index: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    for r in raws.iter().filter(|r| r.event_type != DOMAIN_CREATE) {
        // An open range is checked as an empty one at its start; it closes at a checked timestamp.
        db::check_interval(&name, Some(r.rowid), r.start, r.end.unwrap_or(r.start))?;
        if r.end.is_none() {
            data.open_ranges += 1;
        }
        let text = text_of(r)?;
        let domain = domains
            .get(&(r.domain.unwrap_or(0), r.tid & DOMAIN_PID_MASK))
            .map_or("", |(_, d)| d.as_str());
        let tag = format!("{domain}:{text}");
        let text_idx = intern(&mut text_index, &mut data.texts, text);
        let tag_idx = intern(&mut tag_index, &mut data.tags, tag);
        data.ranges.push(Range {
            rowid: r.rowid,
            start: r.start,
            end: r.end,
            event_type: r.event_type,
            tid: r.tid,
            end_tid: r.end_tid,
            tag: tag_idx,
            text: text_idx,
        });
    }
    Ok(data)
}

fn intern(
    index: &mut std::collections::HashMap<String, u32>,
    values: &mut Vec<String>,
    value: String,
) -> u32 {
    let next = u32::try_from(values.len()).unwrap_or(u32::MAX);
    *index.entry(value.clone()).or_insert_with(|| {
        values.push(value);
        next
    })
}
