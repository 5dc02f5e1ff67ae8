//! Perfetto traces (`gpuopt nsys export perfetto`, `gpuopt torch export perfetto`): the profile's
//! own timeline and gpuopt's facts as tracks, in Perfetto's protobuf format, which the Perfetto UI
//! and trace processor open (`references/perfetto.md` says why this format).

pub mod lanes;
pub mod wire;
pub mod writer;

use crate::error::{Error, Result};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use writer::{Writer, Written};

/// A fact track given by the caller: a hook for analyses this module does not compute (another
/// engine's iterations or critical path) to appear beside the built-in ones.
#[derive(Debug, Clone, Default)]
pub struct FactTrack {
    pub name: String,
    /// `(start_ns, end_ns, label)`, in the export's time base (ns from the file's origin).
    pub slices: Vec<(i64, i64, String)>,
}

/// The keys a `gpuopt profile diff` flagged, to mark where they occur.
#[derive(Debug, Clone, Default)]
pub struct Flagged {
    /// The diff's dimension: `kernel`, `op`, `nvtx` or `memcpy`.
    pub by: String,
    /// Normalised key → change in percent (null when the baseline mean was 0).
    pub keys: std::collections::HashMap<String, Option<f64>>,
}

impl Flagged {
    /// The change of a name's key when the diff flagged it (names normalised as the diff does).
    pub fn change(&self, name: &str) -> Option<Option<f64>> {
        self.keys.get(&normalize(name)).copied()
    }
}

/// A profile diff's key normalisation: runs of whitespace become one space, ends trimmed.
pub fn normalize(name: &str) -> String {
    name.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What every exporter takes besides its input.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub flagged: Option<Flagged>,
    pub extra: Vec<FactTrack>,
    /// HTA's kernel-wait threshold for the causes of gaps (ns).
    pub kernel_wait_threshold_ns: i64,
}

/// Writes a trace to `path` through `body`: into a temporary file beside it, renamed when
/// complete, so a failed export never leaves a half-written trace under the name asked for.
pub fn write_file<F>(path: &Path, body: F) -> Result<Written>
where
    F: FnOnce(&mut Writer<BufWriter<File>>) -> Result<()>,
{
    // Only a regular file is replaced (a device node, FIFO or folder under the name is refused, never
    // renamed over); a link is replaced, the file it points to left as it is.
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.file_type().is_file() {
            return Err(Error::input(
                "output_not_a_file",
                format!(
                    "{} exists and is not a regular file: gpuopt writes outputs as regular files only",
                    path.display()
                ),
            )
            .with_path(path.display().to_string())
            .with_expected("a new path or a regular file"));
        }
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let unwritable = |e: &std::io::Error| {
        Error::input(
            "output_unwritable",
            // The trace is written beside the output, then renamed over it: the error may be the
            // temporary file's (a folder such as /proc/self takes no new files), so say where.
            format!(
                "{}: cannot write it through a new file in {} ({e})",
                path.display(),
                path.parent().unwrap_or(Path::new(".")).display()
            ),
        )
        .with_path(path.display().to_string())
        .with_expected("a folder gpuopt may create files in")
    };
    let file = File::create(&tmp).map_err(|e| unwritable(&e))?;
    let mut w = Writer::new(BufWriter::with_capacity(1 << 20, file));
    let result = body(&mut w).and_then(|()| w.finish());
    match result {
        Ok((_, written)) => {
            std::fs::rename(&tmp, path).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                unwritable(&e)
            })?;
            Ok(written)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// The caller's fact tracks (iterations, critical path, ...): one top-level track each.
pub fn write_extra<W: std::io::Write>(w: &mut Writer<W>, extra: &[FactTrack]) -> Result<()> {
    for track in extra {
        let mut slices: Vec<&(i64, i64, String)> = track.slices.iter().collect();
        slices.sort_by_key(|s| (s.0, std::cmp::Reverse(s.1)));
        let mut out = lanes::Lanes::new(track.name.clone(), None, writer::Kind::Plain);
        out.first(w)?;
        for (start, end, name) in slices {
            out.slice(
                w,
                &lanes::Slice {
                    start: *start,
                    end: *end,
                    name,
                    args: &[],
                    flows: &[],
                    ends: &[],
                },
            )?;
        }
        out.close(w)?;
    }
    Ok(())
}
