"""Names the source files over 600 lines (issue 29: files sized to one job), and fails when one grows.

Every tracked ``.rs`` / ``.py`` file under ``rust/``, ``python/``, ``tests/`` and ``benchmarks/`` (fixtures
under ``tests/data`` excepted) longer than ``LIMIT`` lines is printed. A file may stay over the limit only
while it is listed in ``.ci/long_files.allow`` with its line count when it was listed, and never grows past
that: a new long file, or a listed one that grew, fails CI. Splitting a file means deleting its line.

    python .ci/long_files.py          # print the long files; exit 1 on a new or grown one
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LIMIT = 600
ROOT = Path(__file__).resolve().parent.parent
ALLOW = ROOT / ".ci" / "long_files.allow"


def long_files() -> dict[str, int]:
    listed = subprocess.run(
        ["git", "ls-files", "rust", "python", "tests", "benchmarks"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()
    out = {}
    for name in listed:
        if not name.endswith((".rs", ".py")) or name.startswith("tests/data/"):
            continue
        path = ROOT / name
        if path.is_file():
            lines = path.read_bytes().count(b"\n")
            if lines > LIMIT:
                out[name] = lines
    return out


def allowed() -> dict[str, int]:
    if not ALLOW.exists():
        return {}
    out = {}
    for line in ALLOW.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            count, name = line.split(maxsplit=1)
            out[name.strip()] = int(count)
    return out


def main() -> int:
    found, allow = long_files(), allowed()
    bad = []
    for name, lines in sorted(found.items(), key=lambda kv: -kv[1]):
        cap = allow.get(name)
        state = "new" if cap is None else ("grew" if lines > cap else "listed")
        print(f"{lines:6d}  {name}  ({state}{'' if cap is None else f', listed at {cap}'})")
        if state != "listed":
            bad.append(name)
    print(f"{len(found)} files over {LIMIT} lines")
    if bad:
        print(f"long_files: {len(bad)} new or grown file(s) over {LIMIT} lines: split them by what they hold,"
              " or (for a reason worth a review) list them in .ci/long_files.allow", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
