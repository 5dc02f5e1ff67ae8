//! The repository's copy of the real fixtures (`tests/data/fixtures`), unpacked once for `cargo test`.
//!
//! Large files are stored gzip-compressed as `NAME.fixture.gz` (`tests/data/pack_fixtures.py`); the
//! tree is mirrored into `tests/data/.unpacked`, each file written under a temporary name and renamed,
//! so concurrent test processes (and pytest, which uses the same folder) never read half a file.

use flate2::read::GzDecoder;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const SUFFIX: &str = ".fixture.gz";

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn place(src: &Path, dst: &Path) -> io::Result<()> {
    let newer = |d: &Path| -> io::Result<bool> {
        Ok(fs::metadata(d)?.modified()? >= fs::metadata(src)?.modified()?)
    };
    if dst.exists() && newer(dst)? {
        return Ok(());
    }
    if let Some(parent) = dst.parent() {
        fs::create_dir_all(parent)?;
    }
    let name = dst
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dst.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    if src.to_string_lossy().ends_with(SUFFIX) {
        let mut input = GzDecoder::new(fs::File::open(src)?);
        io::copy(&mut input, &mut fs::File::create(&tmp)?)?;
    } else {
        fs::copy(src, &tmp)?;
    }
    fs::rename(&tmp, dst)
}

fn walk(dir: &Path, packed: &Path, out: &Path) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, packed, out)?;
            continue;
        }
        let rel = path.strip_prefix(packed).map_err(io::Error::other)?;
        let rel = rel.to_string_lossy();
        let rel = rel.strip_suffix(SUFFIX).unwrap_or(&rel);
        place(&path, &out.join(rel))?;
    }
    Ok(())
}

/// The folder holding every fixture under its original name (`h200/nsys/eager.sqlite`, ...).
pub fn fixtures() -> PathBuf {
    static DONE: OnceLock<PathBuf> = OnceLock::new();
    DONE.get_or_init(|| {
        let packed = data().join("fixtures");
        let out = data().join(".unpacked");
        if let Err(e) = walk(&packed, &packed, &out) {
            // A test with no fixtures cannot run; this is test-only code.
            #[allow(clippy::panic)]
            {
                panic!("cannot unpack the fixtures from {}: {e}", packed.display());
            }
        }
        out
    })
    .clone()
}
