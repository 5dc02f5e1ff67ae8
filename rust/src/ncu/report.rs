//! The framing of `.ncu-rep` files, read natively: enough to tell a real report from garbage, count its
//! results before any heavy reader runs, and state the ncu version and command line that made it.
//!
//! Layout (Nsight Compute Customization Guide, "Report File Format", version 7): `NVR\0`, a `u32` size
//! and a `FileHeader` message (`Version` = field 1), then blocks until the end of the file: a `u32` size,
//! a `BlockHeader` message (`NumSources` 1, `NumResults` 2, `SessionDetails` 3, `StringTable` 4,
//! `PayloadSize` 5, `Process` 6) and `PayloadSize` bytes of length-prefixed source and result messages.
//! Inside `SessionDetails`, field 6 is a device (`1` id, `2` name), field 8 a version entry (`1` key,
//! `2` value) and field 11 the profiler command line. Payloads are skipped, not decoded.

use super::codes;
use super::model::version_number;
use crate::error::{Error, Result};
use serde::Serialize;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

const MAGIC: &[u8; 4] = b"NVR\0";
const ZSTD_MAGIC: &[u8; 4] = b"\x28\xb5\x2f\xfd";
/// The report format versions this reader understands.
pub const SUPPORTED_FORMAT_VERSIONS: &[u64] = &[7];
/// A block header larger than this is not a block header (real ones are well under 1 MiB).
const MAX_HEADER_BYTES: u32 = 64 << 20;

/// What the framing of a report says.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Framing {
    pub format_version: u64,
    pub blocks: u64,
    pub results: u64,
    pub sources: u64,
    pub size_bytes: u64,
    pub tool_version: Option<String>,
    pub tool_version_text: Option<String>,
    pub command_line: Option<String>,
    /// `(key, value)` entries of the session's version information (`Nsight Compute Target`, `CUDA Version`).
    pub version_info: Vec<(String, String)>,
    /// `(device id, name)` of the profiled devices.
    pub devices: Vec<(u64, String)>,
}

/// Whether `path` is a compressed report (`.ncu-repz`, ncu 2026.3's default output; or a file that starts
/// with the zstd frame magic). NVIDIA documents that `ncu_report` and `ncu --import` read them but not
/// their container, so gpuopt does not read their framing natively.
pub fn is_compressed(path: &Path) -> bool {
    if path.extension().is_some_and(|e| e == "ncu-repz") {
        return true;
    }
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| &magic == ZSTD_MAGIC)
}

/// Reads the framing of the report at `path`.
pub fn read_framing(path: &Path) -> Result<Framing> {
    let shown = path.display().to_string();
    let mut file = crate::identity::open_regular(path)?;
    let size = file.metadata().map_err(|e| Error::io(path, &e))?.len();
    framing(&mut file, size).map_err(|e| e.with_path(shown))
}

fn framing<R: Read + Seek>(r: &mut R, size: u64) -> Result<Framing> {
    if size == 0 {
        return Err(Error::input(
            codes::REPORT_EMPTY,
            "the .ncu-rep file is empty",
        ));
    }
    let mut magic = [0u8; 4];
    read_exact(r, &mut magic, "the file magic")?;
    if &magic == ZSTD_MAGIC {
        return Err(Error::input(
            codes::VERSION_UNSUPPORTED,
            "a compressed report (.ncu-repz): its framing is not read natively; gpuopt reads it \
             through NVIDIA's ncu_report module or ncu --import",
        )
        .with_expected("an uncompressed .ncu-rep (NVR\\0 magic)"));
    }
    if &magic != MAGIC {
        return Err(Error::input(
            codes::FORMAT_INVALID,
            "not an Nsight Compute report: the first 4 bytes are not the NVR\\0 magic",
        )
        .with_expected("NVR\\0 (4e 56 52 00)")
        .with_observed(format!("the first {}", crate::shape::of(&magic))));
    }
    let header = read_message(r, "the file header")?;
    let format_version = varint_field(&header, 1)?.unwrap_or(0);
    if !SUPPORTED_FORMAT_VERSIONS.contains(&format_version) {
        return Err(Error::input(
            codes::VERSION_UNSUPPORTED,
            format!("report format version {format_version} is not one gpuopt reads"),
        )
        .with_expected("report format version 7")
        .with_observed(format_version.to_string()));
    }
    let mut out = Framing {
        format_version,
        size_bytes: size,
        ..Framing::default()
    };
    let mut offset = 4 + 4 + header.len() as u64;
    while offset < size {
        let block = read_message(r, "a block header")?;
        offset += 4 + block.len() as u64;
        let payload = read_block(&block, &mut out)?;
        offset = offset.checked_add(payload).ok_or_else(truncated)?;
        if offset > size {
            return Err(truncated());
        }
        r.seek(SeekFrom::Start(offset)).map_err(|_| truncated())?;
        out.blocks += 1;
    }
    if out.results == 0 {
        return Err(Error::input(
            codes::REPORT_EMPTY,
            "the report holds no profiling results (0 launches)",
        ));
    }
    Ok(out)
}

fn read_block(block: &[u8], out: &mut Framing) -> Result<u64> {
    let mut payload = 0u64;
    for field in Fields::new(block) {
        let (number, value) = field?;
        match (number, value) {
            (1, Value::Varint(n)) => out.sources += n,
            (2, Value::Varint(n)) => out.results += n,
            (5, Value::Varint(n)) => payload = n,
            (3, Value::Bytes(session)) => read_session(session, out)?,
            _ => {}
        }
    }
    Ok(payload)
}

fn read_session(session: &[u8], out: &mut Framing) -> Result<()> {
    for field in Fields::new(session) {
        match field? {
            (6, Value::Bytes(device)) => {
                let id = varint_field(device, 1)?.unwrap_or(0);
                let name = string_field(device, 2)?.unwrap_or_default();
                out.devices.push((id, name));
            }
            (8, Value::Bytes(entry)) => {
                let key = string_field(entry, 1)?.unwrap_or_default();
                let value = string_field(entry, 2)?.unwrap_or_default();
                if key == "Nsight Compute Target" {
                    out.tool_version = version_number(&value);
                    out.tool_version_text = Some(value.clone());
                }
                out.version_info.push((key, value));
            }
            (11, Value::Bytes(command)) => {
                out.command_line = Some(String::from_utf8_lossy(command).trim().to_string());
            }
            _ => {}
        }
    }
    Ok(())
}

fn truncated() -> Error {
    Error::input(
        codes::FILE_TRUNCATED,
        "the report ends inside a block (truncated .ncu-rep)",
    )
}

fn read_exact<R: Read>(r: &mut R, buf: &mut [u8], what: &str) -> Result<()> {
    r.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => Error::input(
            codes::FILE_TRUNCATED,
            format!("the report ends inside {what}"),
        ),
        _ => Error::input("file_unreadable", format!("reading {what}: {e}")),
    })
}

fn read_message<R: Read>(r: &mut R, what: &str) -> Result<Vec<u8>> {
    let mut len = [0u8; 4];
    read_exact(r, &mut len, what)?;
    let len = u32::from_le_bytes(len);
    if len > MAX_HEADER_BYTES {
        return Err(Error::input(
            codes::FORMAT_INVALID,
            format!("{what} claims {len} bytes; not an Nsight Compute report"),
        ));
    }
    let mut buf = vec![0u8; len as usize];
    read_exact(r, &mut buf, what)?;
    Ok(buf)
}

/// A protobuf field value (groups are not used by the report format and are rejected).
enum Value<'a> {
    Varint(u64),
    Fixed,
    Bytes(&'a [u8]),
}

struct Fields<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    fn varint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.data.get(self.pos).ok_or_else(malformed)?;
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(malformed())
    }
}

fn malformed() -> Error {
    Error::input(
        codes::FORMAT_INVALID,
        "a report header is not a valid protobuf message",
    )
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.data.len() {
            return None;
        }
        let item = (|| {
            let key = self.varint()?;
            let value = match key & 7 {
                0 => Value::Varint(self.varint()?),
                1 => self.skip(8)?,
                5 => self.skip(4)?,
                2 => {
                    let len = usize::try_from(self.varint()?).map_err(|_| malformed())?;
                    let end = self.pos.checked_add(len).ok_or_else(malformed)?;
                    let bytes = self.data.get(self.pos..end).ok_or_else(malformed)?;
                    self.pos = end;
                    Value::Bytes(bytes)
                }
                _ => return Err(malformed()),
            };
            Ok((key >> 3, value))
        })();
        if item.is_err() {
            self.pos = self.data.len();
        }
        Some(item)
    }
}

impl Fields<'_> {
    fn skip(&mut self, n: usize) -> Result<Value<'static>> {
        let end = self.pos + n;
        if end > self.data.len() {
            return Err(malformed());
        }
        self.pos = end;
        Ok(Value::Fixed)
    }
}

fn varint_field(message: &[u8], number: u64) -> Result<Option<u64>> {
    for field in Fields::new(message) {
        if let (n, Value::Varint(v)) = field? {
            if n == number {
                return Ok(Some(v));
            }
        }
    }
    Ok(None)
}

fn string_field(message: &[u8], number: u64) -> Result<Option<String>> {
    for field in Fields::new(message) {
        if let (n, Value::Bytes(b)) = field? {
            if n == number {
                return Ok(Some(String::from_utf8_lossy(b).into_owned()));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn fixture(rel: &str) -> Vec<u8> {
        let path = crate::testdata::fixtures().join(rel);
        std::fs::read(path).unwrap()
    }

    fn frame(data: &[u8]) -> Result<Framing> {
        framing(&mut Cursor::new(data), data.len() as u64)
    }

    #[test]
    fn h200_report_framing() {
        let f = frame(&fixture("h200/ncu/kernels_full.ncu-rep")).unwrap();
        assert_eq!(f.format_version, 7);
        assert_eq!(f.results, 12);
        assert_eq!(f.sources, 2);
        assert_eq!(f.tool_version.as_deref(), Some("2025.3.1.0"));
        assert_eq!(f.devices, vec![(0, "NVIDIA H200".to_string())]);
        assert!(f.command_line.as_deref().unwrap().ends_with(
            "--clock-control none --set full --import-source yes -o ncu/kernels_full ./kernels_bin"
        ));
    }

    #[test]
    fn a100_report_framing() {
        let f = frame(&fixture("public/ncu/cutlass_report.ncu-rep")).unwrap();
        assert_eq!(f.results, 3);
        assert_eq!(f.tool_version.as_deref(), Some("2024.1.1.0"));
        assert_eq!(f.devices, vec![(1, "NVIDIA A100 80GB PCIe".to_string())]);
    }

    #[test]
    fn garbage_empty_and_truncated_reports_are_errors() {
        assert_eq!(
            frame(b"\x12\x34garbage-garbage").unwrap_err().code,
            codes::FORMAT_INVALID
        );
        assert_eq!(frame(b"").unwrap_err().code, codes::REPORT_EMPTY);
        let data = fixture("h200/ncu/kernels_full.ncu-rep");
        let cut = &data[..data.len() / 2];
        assert_eq!(frame(cut).unwrap_err().code, codes::FILE_TRUNCATED);
        // The framing alone (header and the first session blocks) holds no results.
        assert_eq!(frame(&data[..14]).unwrap_err().code, codes::FILE_TRUNCATED);
    }

    #[test]
    fn a_header_without_results_is_an_empty_report() {
        // NVR\0, FileHeader{Version: 7}, one block header {NumSources 0, NumResults 0, PayloadSize 0}.
        let mut data = b"NVR\0".to_vec();
        data.extend_from_slice(&2u32.to_le_bytes());
        data.extend_from_slice(&[0x08, 0x07]);
        let block = [0x08, 0x00, 0x10, 0x00, 0x28, 0x00];
        data.extend_from_slice(&(block.len() as u32).to_le_bytes());
        data.extend_from_slice(&block);
        assert_eq!(frame(&data).unwrap_err().code, codes::REPORT_EMPTY);
    }

    #[test]
    fn unknown_format_versions_fail_closed() {
        let mut data = b"NVR\0".to_vec();
        data.extend_from_slice(&2u32.to_le_bytes());
        data.extend_from_slice(&[0x08, 0x09]);
        assert_eq!(frame(&data).unwrap_err().code, codes::VERSION_UNSUPPORTED);
    }
}
