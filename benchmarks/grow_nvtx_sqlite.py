"""Grow the NVTX ranges of an export grown by ``shared/recipes/grow_nsys_sqlite.py``, for NVTX scale tests.

That recipe repeats the kernel, memcpy, memset and runtime rows of a source export in time (one copy
per *period*: the source's runtime span + 1 µs) but leaves ``NVTX_EVENTS`` as it was. This one copies the
grown export to DST and adds NVTX rows until it holds RANGES ranges: each source range is repeated in
every period (shifted like the work it wrapped) and, within a period, ``copies`` times, copy ``j``
nested inside copy ``j - 1`` (start + j ns, end - j ns), so every kernel launched inside a range is
launched inside all its copies. The rows added stop at RANGES in all.

Usage: ``python benchmarks/grow_nvtx_sqlite.py SOURCE GROWN DST [RANGES]`` (default 15,900,000: the
range count of the 3.5 GB capture nsys-ai's PR #303 reports attribution times for). SOURCE is the
export GROWN was grown from (its runtime span gives the period; its kernel count the repetitions).
"""

from __future__ import annotations

import math
import shutil
import sqlite3
import sys


def grow(source: str, grown: str, dst: str, ranges: int) -> None:
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    lo, hi = src.execute("SELECT min(start), max(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    period = hi - lo + 1000  # as grow_nsys_sqlite.py spaces its repetitions
    base_kernels = src.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    base_ranges = src.execute("SELECT count(*) FROM NVTX_EVENTS").fetchone()[0]
    src.close()
    shutil.copyfile(grown, dst)
    con = sqlite3.connect(dst)
    kernels = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    reps = kernels // base_kernels
    have = con.execute("SELECT count(*) FROM NVTX_EVENTS").fetchone()[0]
    if have != base_ranges or reps * base_kernels != kernels:
        sys.exit(f"grow_nvtx_sqlite: {grown} is not {source} grown by grow_nsys_sqlite.py")
    copies = math.ceil(ranges / (base_ranges * reps))
    cols = [r[1] for r in con.execute('PRAGMA table_info("NVTX_EVENTS")')]
    shifted = {"start": "start + p.i * {period} + c.j", "end": "end + p.i * {period} - c.j"}
    sel = ", ".join(shifted[c].format(period=period) if c in shifted else c for c in cols)
    con.execute("CREATE TEMP TABLE base AS SELECT * FROM NVTX_EVENTS ORDER BY start")
    con.execute(
        f"""WITH RECURSIVE p(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM p WHERE i < {reps - 1}),
                           c(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM c WHERE j < {copies - 1})
            INSERT INTO NVTX_EVENTS ({", ".join(cols)})
            SELECT {sel} FROM p, c, base WHERE p.i > 0 OR c.j > 0
            LIMIT {ranges - have}"""
    )
    con.commit()
    print("NVTX_EVENTS", con.execute("SELECT count(*) FROM NVTX_EVENTS").fetchone()[0], flush=True)
    con.close()


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    grow(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) == 5 else 15_900_000)
