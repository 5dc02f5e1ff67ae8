"""The repository's own copy of the real fixtures: ``tests/data/fixtures``, unpacked once per run.

``tests/data/pack_fixtures.py`` made that folder from ``../shared/fixtures``; large files are stored as
``NAME.fixture.gz``. ``unpacked()`` mirrors the whole tree into ``tests/data/.unpacked`` (git-ignored),
writing each file through a temporary name and a rename so that concurrent runs never see half a file.
``rust/src/testdata.rs`` does the same for ``cargo test``.
"""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
PACKED = DATA / "fixtures"
UNPACKED = DATA / ".unpacked"
SUFFIX = ".fixture.gz"


def _place(src: Path, dst: Path) -> None:
    if dst.exists() and dst.stat().st_mtime_ns >= src.stat().st_mtime_ns:
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    if src.name.endswith(SUFFIX):
        with gzip.open(src, "rb") as fin, tmp.open("wb") as fout:
            shutil.copyfileobj(fin, fout)
    else:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def unpacked() -> Path:
    """Returns the folder holding every fixture under its original name."""
    if not PACKED.is_dir():
        raise FileNotFoundError(f"the repository's fixtures are missing: expected {PACKED}")
    for src in PACKED.rglob("*"):
        if src.is_file():
            rel = src.relative_to(PACKED).as_posix()
            rel = rel[: -len(SUFFIX)] if rel.endswith(SUFFIX) else rel
            _place(src, UNPACKED / rel)
    return UNPACKED
