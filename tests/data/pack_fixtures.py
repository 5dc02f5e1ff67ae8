"""Copies the shared fixtures into ``tests/data/fixtures`` so that a clone runs its tests alone.

Run from the repository root with ``../shared`` beside it: ``python tests/data/pack_fixtures.py``.
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


def main() -> int:
    root = Path(__file__).resolve().parents[2]
    source = root.parent / "shared" / "fixtures"
    target = root / "tests" / "data" / "fixtures"
    if not source.is_dir():
        print(f"no shared fixtures at {source}", file=sys.stderr)
        return 2
    if target.exists():
        shutil.rmtree(target)
    for path in sorted(source.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(source)
        out = target / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if path.stat().st_size >= THRESHOLD and not path.name.endswith(ALREADY_COMPRESSED):
            with path.open("rb") as src, gzip.GzipFile(
                out.with_name(out.name + PACKED_SUFFIX), "wb", compresslevel=9, mtime=0
            ) as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copyfile(path, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
