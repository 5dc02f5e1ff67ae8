//! A direct reader of SQLite table b-trees (the file format of sqlite.org/fileformat2.html), used to
//! scan the large activity tables of an immutable export much faster than row-by-row `sqlite3_step`:
//! the leaf pages of a table are listed from its interior pages, split among the workers, read in
//! large sequential runs and decoded in place, extracting only the requested columns.
//!
//! The reader handles exactly what nsys writes: rowid tables, UTF-8 text, overflow chains, records
//! shorter than the table (columns added later). Anything else (a WAL file beside the database, an
//! index-organized table, an unexpected page type) makes it step aside ([`Unsupported`]) and the
//! caller scans through SQLite instead; the two paths are tested to agree row for row.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Pages read per I/O call when leaf pages are consecutive.
const RUN_PAGES: usize = 256;
/// The most columns one scan decodes.
pub const MAX_COLUMNS: usize = 16;

/// Why the direct reader stepped aside (the caller falls back to SQLite).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

type R<T> = std::result::Result<T, Unsupported>;

fn unsupported<T>(why: impl Into<String>) -> R<T> {
    Err(Unsupported(why.into()))
}

/// One decoded value, borrowing text and blobs from the page buffer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Val<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a [u8]),
    Blob(&'a [u8]),
}

/// The geometry of a database file.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    pub page_size: usize,
    pub usable: usize,
    pub page_count: u64,
}

impl Geometry {
    /// Reads the 100-byte header; WAL databases with a non-empty `-wal` file are not read directly.
    pub fn read(path: &Path, file: &File) -> R<Self> {
        let mut h = [0u8; 100];
        file.read_exact_at(&mut h, 0)
            .or_else(|e| unsupported(format!("header: {e}")))?;
        let raw = u16::from_be_bytes([h[16], h[17]]);
        let page_size = if raw == 1 { 65536 } else { usize::from(raw) };
        if page_size < 512 || !page_size.is_power_of_two() {
            return unsupported(format!("page size {page_size}"));
        }
        if h[18] == 2 || h[19] == 2 {
            let mut wal = path.as_os_str().to_owned();
            wal.push("-wal");
            if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
                return unsupported("a WAL file holds part of the database");
            }
        }
        let usable = page_size - usize::from(h[20]);
        if u32::from_be_bytes([h[56], h[57], h[58], h[59]]) > 1 {
            return unsupported("text encoding is not UTF-8");
        }
        let len = file
            .metadata()
            .map(|m| m.len())
            .or_else(|e| unsupported(format!("metadata: {e}")))?;
        Ok(Self {
            page_size,
            usable,
            page_count: len / page_size as u64,
        })
    }

    fn offset(&self, page: u32) -> u64 {
        u64::from(page.saturating_sub(1)) * self.page_size as u64
    }
}

/// A table b-tree: the file, its geometry and the leaf pages in key order.
pub struct Tree {
    file: File,
    pub geo: Geometry,
    pub leaves: Vec<u32>,
}

impl Tree {
    /// Lists the leaf pages of the table rooted at `root`, level by level. A table b-tree is
    /// balanced (every leaf at the same depth), so only interior pages are read: once the first page
    /// of a level is a leaf, the whole level is the leaves (each is checked as a leaf when scanned or
    /// counted; the reader steps aside there if one is not).
    pub fn open(path: &Path, root: u32) -> R<Self> {
        let file = File::open(path).or_else(|e| unsupported(format!("open: {e}")))?;
        let geo = Geometry::read(path, &file)?;
        let mut level = vec![root];
        let mut page = vec![0u8; geo.page_size];
        let mut visited = 0u64;
        loop {
            let mut next = Vec::new();
            for (i, &p) in level.iter().enumerate() {
                visited += 1;
                if visited > geo.page_count {
                    return unsupported("the b-tree has a cycle");
                }
                read_page(&file, &geo, p, &mut page)?;
                let hdr = if p == 1 { 100 } else { 0 };
                match page.get(hdr).copied() {
                    Some(0x0D) if i == 0 => {
                        return Ok(Self {
                            file,
                            geo,
                            leaves: level,
                        })
                    }
                    Some(0x05) => {
                        let n = usize::from(be16(&page, hdr + 3)?);
                        for k in 0..n {
                            let cell = usize::from(be16(&page, hdr + 12 + 2 * k)?);
                            next.push(be32(&page, cell)?);
                        }
                        next.push(be32(&page, hdr + 8)?);
                    }
                    other => {
                        return unsupported(format!(
                            "page {p} has type {other:?}, not a table b-tree page at its depth"
                        ))
                    }
                }
            }
            if next.is_empty() {
                return unsupported("an interior page without children");
            }
            level = next;
        }
    }

    /// The number of rows in `leaves` (a slice of [`Tree::leaves`]): each leaf's cell count, read
    /// from its page header alone (no cell is decoded, no page body read).
    pub fn count(&self, leaves: &[u32]) -> R<u64> {
        let mut head = [0u8; 8];
        let mut total = 0u64;
        for &p in leaves {
            if p == 0 || u64::from(p) > self.geo.page_count {
                return unsupported(format!("page {p} is outside the file"));
            }
            let at = self.geo.offset(p) + if p == 1 { 100 } else { 0 };
            self.file
                .read_exact_at(&mut head, at)
                .or_else(|e| unsupported(format!("read page {p}: {e}")))?;
            if head.first() != Some(&0x0D) {
                return unsupported(format!("page {p} is not a table leaf page"));
            }
            total += u64::from(be16(&head, 3)?);
        }
        Ok(total)
    }

    /// Decodes every row of `leaves` (a slice of [`Tree::leaves`]), calling `each(rowid, values)`
    /// with the values of the record columns `columns` (`None` = the rowid itself).
    pub fn scan<E, F>(
        &self,
        leaves: &[u32],
        columns: &[Option<usize>],
        each: &mut F,
    ) -> R<Result<(), E>>
    where
        F: FnMut(i64, &[Val<'_>]) -> Result<(), E>,
    {
        if columns.len() > MAX_COLUMNS {
            return unsupported("too many columns");
        }
        let mut plan = Plan::new(columns);
        let ps = self.geo.page_size;
        let mut buf = vec![0u8; ps * RUN_PAGES];
        let mut overflow = Vec::new();
        let mut i = 0usize;
        while i < leaves.len() {
            // The longest run of consecutive page numbers starting here.
            let first = *leaves.get(i).unwrap_or(&0);
            let mut n = 1usize;
            while n < RUN_PAGES && leaves.get(i + n).copied() == first.checked_add(n as u32) {
                n += 1;
            }
            let run = buf.get_mut(..ps * n).unwrap_or_default();
            self.file
                .read_exact_at(run, self.geo.offset(first))
                .or_else(|e| unsupported(format!("read page {first}: {e}")))?;
            for k in 0..n {
                let page = run.get(k * ps..(k + 1) * ps).unwrap_or_default();
                let number = first + k as u32;
                if let Err(e) = self.leaf(page, number, &mut plan, &mut overflow, each)? {
                    return Ok(Err(e));
                }
            }
            i += n;
        }
        Ok(Ok(()))
    }

    #[inline]
    fn leaf<E, F>(
        &self,
        page: &[u8],
        number: u32,
        plan: &mut Plan,
        overflow: &mut Vec<u8>,
        each: &mut F,
    ) -> R<Result<(), E>>
    where
        F: FnMut(i64, &[Val<'_>]) -> Result<(), E>,
    {
        let hdr = if number == 1 { 100 } else { 0 };
        if page.get(hdr).copied() != Some(0x0D) {
            return unsupported(format!("page {number} is not a table leaf"));
        }
        let cells = usize::from(be16(page, hdr + 3)?);
        let usable = self.geo.usable;
        let max_local = usable - 35;
        let min_local = ((usable - 12) * 32 / 255) - 23;
        let n = plan.len;
        let mut vals = [Val::Null; MAX_COLUMNS];
        for c in 0..cells {
            let mut at = usize::from(be16(page, hdr + 8 + 2 * c)?);
            let (payload, n1) = varint(page, at)?;
            at += n1;
            let (rowid, n2) = varint(page, at)?;
            at += n2;
            let payload = usize::try_from(payload).or_else(|_| unsupported("payload size"))?;
            let outcome =
                if payload <= max_local {
                    let record = page.get(at..at + payload).ok_or_else(|| {
                        Unsupported(format!("cell past the end of page {number}"))
                    })?;
                    plan.decode(record, rowid as i64, &mut vals)?;
                    each(rowid as i64, vals.get(..n).unwrap_or_default())
                } else {
                    let k = min_local + (payload - min_local) % (usable - 4);
                    let local = if k <= max_local { k } else { min_local };
                    overflow.clear();
                    overflow.extend_from_slice(page.get(at..at + local).ok_or_else(|| {
                        Unsupported(format!("cell past the end of page {number}"))
                    })?);
                    let next = be32(page, at + local)?;
                    self.follow(next, payload, overflow)?;
                    let mut spilled = [Val::Null; MAX_COLUMNS];
                    plan.decode(overflow, rowid as i64, &mut spilled)?;
                    each(rowid as i64, spilled.get(..n).unwrap_or_default())
                };
            if let Err(e) = outcome {
                return Ok(Err(e));
            }
        }
        Ok(Ok(()))
    }

    /// Appends the overflow chain starting at `next` until `out` holds `total` bytes.
    fn follow(&self, mut next: u32, total: usize, out: &mut Vec<u8>) -> R<()> {
        let mut page = vec![0u8; self.geo.page_size];
        let mut hops = 0u64;
        while out.len() < total {
            hops += 1;
            if next == 0 || hops > self.geo.page_count {
                return unsupported("a broken overflow chain");
            }
            read_page(&self.file, &self.geo, next, &mut page)?;
            let take = (total - out.len()).min(self.geo.usable - 4);
            out.extend_from_slice(page.get(4..4 + take).unwrap_or_default());
            next = be32(&page, 0)?;
        }
        Ok(())
    }
}

fn read_page(file: &File, geo: &Geometry, p: u32, buf: &mut [u8]) -> R<()> {
    if p == 0 || u64::from(p) > geo.page_count {
        return unsupported(format!("page {p} is outside the file"));
    }
    file.read_exact_at(buf, geo.offset(p))
        .or_else(|e| unsupported(format!("read page {p}: {e}")))
}

/// Which record columns go to which output slots, prepared once per scan, with the decoded layout
/// of the last record header (rows of one table usually share their header bytes, so the column
/// offsets are computed once per distinct header rather than once per row).
struct Plan {
    /// `slot[c]`: the output slot of record column `c`, or `NONE`.
    slot: Vec<u8>,
    /// Output slots that repeat an earlier slot's column: (slot, source slot).
    copies: Vec<(usize, usize)>,
    /// Output slots that take the rowid.
    rowid: Vec<usize>,
    len: usize,
    /// The cached header's leading bytes that decide where the planned columns lie: its length
    /// varint and the serial types up to the last planned column (later columns do not move them).
    header: Vec<u8>,
    /// The cached header's whole length (where the body starts).
    header_len: usize,
    /// For the cached header: (output slot, body offset, serial type, size).
    fields: Vec<(usize, usize, u64, usize)>,
}

const NONE: u8 = u8::MAX;

impl Plan {
    fn new(columns: &[Option<usize>]) -> Self {
        let last = columns.iter().flatten().copied().max();
        let mut slot = vec![NONE; last.map_or(0, |l| l + 1)];
        let (mut copies, mut rowid) = (Vec::new(), Vec::new());
        for (i, c) in columns.iter().enumerate() {
            match c {
                None => rowid.push(i),
                Some(c) => match slot.get(*c).copied() {
                    Some(NONE) => {
                        if let Some(s) = slot.get_mut(*c) {
                            *s = u8::try_from(i).unwrap_or(NONE);
                        }
                    }
                    Some(first) => copies.push((i, usize::from(first))),
                    None => {}
                },
            }
        }
        Self {
            slot,
            copies,
            rowid,
            len: columns.len(),
            header: Vec::new(),
            header_len: usize::MAX,
            fields: Vec::new(),
        }
    }

    /// Computes where the planned columns lie for a record header. Columns past the record's end
    /// (added to the table after the row was written) are left out, so they read as NULL.
    fn layout(&mut self, header: &[u8]) -> R<()> {
        self.fields.clear();
        let (_, mut h) = varint(header, 0)?;
        let mut body = header.len();
        for &target in &self.slot {
            if h >= header.len() {
                break;
            }
            let (serial, n) = varint(header, h)?;
            h += n;
            let size = serial_size(serial)?;
            if target != NONE {
                self.fields.push((usize::from(target), body, serial, size));
            }
            body += size;
        }
        self.header.clear();
        self.header
            .extend_from_slice(header.get(..h).unwrap_or(header));
        self.header_len = header.len();
        Ok(())
    }

    /// Decodes the planned columns of one record.
    #[inline]
    fn decode<'a>(
        &mut self,
        record: &'a [u8],
        rowid: i64,
        out: &mut [Val<'a>; MAX_COLUMNS],
    ) -> R<()> {
        for v in out.iter_mut().take(self.len) {
            *v = Val::Null;
        }
        let (header_len, _) = varint(record, 0)?;
        let header_len = usize::try_from(header_len).or_else(|_| unsupported("record header"))?;
        let header = record
            .get(..header_len)
            .ok_or_else(|| Unsupported("a record header past its record".to_string()))?;
        // Rows of one table mostly share the serial types of the leading columns even where later
        // ones (grid sizes, ids) differ, so only the prefix that places the planned columns is compared.
        if header_len != self.header_len
            || header.get(..self.header.len()) != Some(self.header.as_slice())
        {
            self.layout(header)?;
        }
        for &(slot, at, serial, size) in &self.fields {
            if let Some(v) = out.get_mut(slot) {
                *v = value(record, at, serial, size)?;
            }
        }
        for &(i, from) in &self.copies {
            let v = out.get(from).copied().unwrap_or(Val::Null);
            if let Some(slot) = out.get_mut(i) {
                *slot = v;
            }
        }
        for &i in &self.rowid {
            if let Some(slot) = out.get_mut(i) {
                *slot = Val::Int(rowid);
            }
        }
        Ok(())
    }
}

#[inline]
fn serial_size(serial: u64) -> R<usize> {
    Ok(match serial {
        0 | 8 | 9 => 0,
        1 => 1,
        2 => 2,
        3 => 3,
        4 => 4,
        5 => 6,
        6 | 7 => 8,
        10 | 11 => return unsupported("reserved serial type"),
        n => usize::try_from((n - 12) / 2).or_else(|_| unsupported("value size"))?,
    })
}

#[inline]
fn value(record: &[u8], at: usize, serial: u64, size: usize) -> R<Val<'_>> {
    let bytes = record
        .get(at..at + size)
        .ok_or_else(|| Unsupported("a value past the end of its record".to_string()))?;
    Ok(match serial {
        0 => Val::Null,
        1..=6 => Val::Int(be_int(bytes)),
        7 => {
            let mut w = [0u8; 8];
            w.copy_from_slice(bytes);
            Val::Real(f64::from_be_bytes(w))
        }
        8 => Val::Int(0),
        9 => Val::Int(1),
        n if n % 2 == 0 => Val::Blob(bytes),
        _ => Val::Text(bytes),
    })
}

/// A big-endian two's-complement integer of 1 to 8 bytes. The sizes SQLite writes (1, 2, 3, 4, 6, 8)
/// are decoded from fixed-size arrays: no variable-length copy per value on the hot path.
#[inline(always)]
fn be_int(bytes: &[u8]) -> i64 {
    match *bytes {
        [a] => i64::from(i8::from_be_bytes([a])),
        [a, b] => i64::from(i16::from_be_bytes([a, b])),
        [a, b, c] => (i64::from(i16::from_be_bytes([a, b])) << 8) | i64::from(c),
        [a, b, c, d] => i64::from(i32::from_be_bytes([a, b, c, d])),
        [a, b, c, d, e, f] => {
            (i64::from(i16::from_be_bytes([a, b])) << 32)
                | i64::from(u32::from_be_bytes([c, d, e, f]))
        }
        [a, b, c, d, e, f, g, h] => i64::from_be_bytes([a, b, c, d, e, f, g, h]),
        _ => be_int_any(bytes),
    }
}

/// [`be_int`] of any length up to 8.
fn be_int_any(bytes: &[u8]) -> i64 {
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let mut w = if negative { [0xFFu8; 8] } else { [0u8; 8] };
    let n = bytes.len().min(8);
    if let Some(tail) = w.get_mut(8 - n..) {
        tail.copy_from_slice(bytes.get(..n).unwrap_or_default());
    }
    i64::from_be_bytes(w)
}

/// A SQLite varint at `at`: (value, length).
#[inline(always)]
fn varint(buf: &[u8], at: usize) -> R<(u64, usize)> {
    match buf.get(at) {
        Some(&b) if b < 0x80 => return Ok((u64::from(b), 1)),
        None => return unsupported("a varint past the end of its page"),
        _ => {}
    }
    let mut v: u64 = 0;
    for i in 0..9 {
        let Some(&b) = buf.get(at + i) else {
            return unsupported("a varint past the end of its page");
        };
        if i == 8 {
            return Ok(((v << 8) | u64::from(b), 9));
        }
        v = (v << 7) | u64::from(b & 0x7F);
        if b & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    unsupported("varint")
}

fn be16(buf: &[u8], at: usize) -> R<u16> {
    match buf.get(at..at + 2) {
        Some(&[a, b]) => Ok(u16::from_be_bytes([a, b])),
        _ => unsupported("a field past the end of its page"),
    }
}

fn be32(buf: &[u8], at: usize) -> R<u32> {
    match buf.get(at..at + 4) {
        Some(&[a, b, c, d]) => Ok(u32::from_be_bytes([a, b, c, d])),
        _ => unsupported("a field past the end of its page"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_decode() {
        assert_eq!(varint(&[0x05], 0), Ok((5, 1)));
        assert_eq!(varint(&[0x81, 0x00], 0), Ok((128, 2)));
        assert_eq!(varint(&[0xFF; 9], 0), Ok((u64::MAX, 9)));
        assert!(varint(&[0x81], 0).is_err());
    }

    #[test]
    fn integers_are_big_endian_and_signed() {
        assert_eq!(value(&[0xFF], 0, 1, 1), Ok(Val::Int(-1)));
        assert_eq!(value(&[0x01, 0x00], 0, 2, 2), Ok(Val::Int(256)));
        assert_eq!(value(&[0, 0, 0, 1, 0, 0], 0, 5, 6), Ok(Val::Int(1 << 16)));
        assert_eq!(value(&[], 0, 9, 0), Ok(Val::Int(1)));
        // Every size, both signs, against the generic decoder.
        for bytes in [
            &[0x80][..],
            &[0x7F, 0xFF],
            &[0xFF, 0x00, 0x01],
            &[0x00, 0x80, 0x00],
            &[0x80, 0, 0, 1],
            &[0xFF, 0xFE, 0, 0, 0, 7],
            &[0x00, 0x01, 0xFF, 0xFF, 0xFF, 0xFF],
            &[0x80, 0, 0, 0, 0, 0, 0, 0],
            &[0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0],
        ] {
            assert_eq!(be_int(bytes), be_int_any(bytes), "{bytes:?}");
        }
        assert_eq!(be_int(&[0xFF, 0x00, 0x01]), -65535);
        assert_eq!(be_int(&[0xFF, 0xFE, 0, 0, 0, 7]), -(2i64 << 32) + 7);
    }

    #[test]
    fn decodes_requested_columns_and_missing_trailing_ones() {
        // Header: len 4, types [1 (i8), 0 (NULL), 19 (3-byte text)]; body: 7, "abc".
        let record = [4u8, 1, 0, 19, 7, b'a', b'b', b'c'];
        let mut out = [Val::Null; MAX_COLUMNS];
        let mut plan = Plan::new(&[Some(2), None, Some(0), Some(5), Some(0)]);
        plan.decode(&record, 42, &mut out).unwrap();
        // The cached layout serves the next record with the same header.
        let again = [4u8, 1, 0, 19, 9, b'x', b'y', b'z'];
        let mut out2 = [Val::Null; MAX_COLUMNS];
        plan.decode(&again, 43, &mut out2).unwrap();
        assert_eq!(
            (out2[0], out2[1], out2[2]),
            (Val::Text(b"xyz"), Val::Int(43), Val::Int(9))
        );
        assert_eq!(out[0], Val::Text(b"abc"));
        assert_eq!(out[1], Val::Int(42));
        assert_eq!(out[2], Val::Int(7));
        assert_eq!(out[3], Val::Null);
        assert_eq!(out[4], Val::Int(7));
    }
}
