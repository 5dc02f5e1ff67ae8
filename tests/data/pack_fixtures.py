"""Copies the shared fixtures into ``tests/data/fixtures`` so that a clone runs its tests alone.

Run from the repository root with ``../shared`` beside it: ``python tests/data/pack_fixtures.py``; files this
project made itself live under ``fixtures/gpuopt/`` and are kept (add one with ``--add SRC REL``).
Files of 64 KiB or more that are not already compressed are stored gzip-compressed as
``NAME.fixture.gz``; ``tests/fixture_data.py`` (Python) and ``rust/src/testdata.rs`` (Rust) unpack the
tree once into ``tests/data/.unpacked`` (git-ignored), where the tests read it.
"""

from __future__ import annotations

import gzip
import shutil
import sys
from pathlib import Path

PACKED_SUFFIX = ".fixture.gz"
THRESHOLD = 64 * 1024
ALREADY_COMPRESSED = (".gz", ".xz", ".zip", ".ncu-repz")


OWN = "gpuopt"


def pack(path: Path, out: Path) -> None:
    """Stores ``path`` as ``out`` (or ``out.fixture.gz`` when large and not yet compressed)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    if path.stat().st_size >= THRESHOLD and not path.name.endswith(ALREADY_COMPRESSED):
        with path.open("rb") as src, gzip.GzipFile(
            out.with_name(out.name + PACKED_SUFFIX), "wb", compresslevel=9, mtime=0
        ) as dst:
            shutil.copyfileobj(src, dst)
    else:
        shutil.copyfile(path, out)


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parents[2]
    target = root / "tests" / "data" / "fixtures"
    if len(argv) == 3 and argv[0] == "--add":
        pack(Path(argv[1]), target / OWN / argv[2])
        return 0
    source = root.parent / "shared" / "fixtures"
    if not source.is_dir():
        print(f"no shared fixtures at {source}", file=sys.stderr)
        return 2
    for child in target.iterdir() if target.is_dir() else []:
        if child.name != OWN:
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    for path in sorted(source.rglob("*")):
        if path.is_file():
            pack(path, target / path.relative_to(source))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
