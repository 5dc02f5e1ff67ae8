"""Checks an agent's answers.json against truth computed here from the files themselves (see README.md)."""

from __future__ import annotations

import csv
import json
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any


def _db(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def truth(d: Path) -> dict[str, Any]:
    t: dict[str, Any] = {}
    with _db(d / "decode_eager.sqlite") as db:
        rows = db.execute(
            "SELECT s.value, d.value, sum(k.end - k.start) AS total FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.shortName JOIN StringIds d ON d.id = k.demangledName "
            "GROUP BY k.demangledName ORDER BY total DESC LIMIT 1"
        ).fetchone()
        t["q1"] = {rows[0], rows[1]}
        t["q2"] = rows[2]
        t["q3"] = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
        t["q4"] = {r[0] for r in db.execute("SELECT name FROM TARGET_INFO_GPU")}
    with _db(d / "decode_graph.sqlite") as db:
        t["q5"] = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE").fetchone()[0]
        launched = (
            "SELECT coalesce(sum(g.end - g.start), 0) FROM {table} g "
            "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = g.correlationId "
            "JOIN NVTX_EVENTS n ON n.globalTid = r.globalTid AND n.start <= r.start AND r.end <= n.end "
            "WHERE n.text = 'decode_step'"
        )
        t["q6"] = sum(
            db.execute(launched.format(table=table)).fetchone()[0]
            for table in ("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "CUPTI_ACTIVITY_KIND_KERNEL")
        )
    events = json.loads((d / "decode_eager_torch.json").read_text())["traceEvents"]
    ops: dict[str, float] = defaultdict(float)
    for e in events:
        if e.get("cat") == "cpu_op" and e.get("ph") == "X":
            ops[e["name"]] += float(e.get("dur", 0))
    t["q7"] = {max(ops, key=ops.__getitem__)}
    oracle = d.parent / f"{d.name}.oracle" / "kernels.raw.csv"
    rows_csv = list(csv.reader(oracle.open()))
    head, data = rows_csv[0], rows_csv[2:]
    t["q8"] = len(data)
    time_col, name_col = head.index("gpu__time_duration.sum"), head.index("Kernel Name")
    longest = max(data, key=lambda r: float(r[time_col].replace(",", "")))
    t["q9"] = {longest[name_col].split("(")[0].strip()}
    return t


def main() -> None:
    d = Path(sys.argv[1])
    answers = json.loads((d / "answers.json").read_text())
    want = truth(d)
    right = 0
    for q, expected in want.items():
        got = answers.get(q)
        ok = got in expected if isinstance(expected, set) else got == expected
        right += ok
        print(f"{q}: {'right' if ok else 'WRONG'}  answered {got!r}  truth {expected!r}")
    log = d / "commands.log"
    commands = [line for line in log.read_text().splitlines() if line.strip()] if log.exists() else []
    helps = sum("--help" in c or c.strip().endswith(" -h") for c in commands)
    print(f"{right}/{len(want)} right; {len(commands)} commands ({helps} of them --help)")


if __name__ == "__main__":
    main()
