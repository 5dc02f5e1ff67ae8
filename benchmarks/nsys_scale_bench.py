"""Wall time and peak memory of gpuopt's whole-export nsys commands on a grown export, against peers.

Issue 16 ("Memory bounds", "NVTX at scale"): on the 4.3 GB export ``nsys_bench.py`` builds (32768
repetitions of ``h200/nsys/eager.sqlite``: 5.77 M kernels, 84 M runtime calls), each of

* ``gpuopt nsys timeline FILE --json``
* ``gpuopt nsys gaps FILE --sort duration_ns --limit 5 --json`` (top 5 gaps by length)
* ``gpuopt nsys gaps FILE --limit 5 --json`` (the first 5 gaps, no sort: issue 28 found 5.1 GB here)
* ``gpuopt nsys summary FILE --json``
* ``gpuopt nsys nvtx FILE --json``
* ``gpuopt nsys critical-path|queue|iterations|sequences FILE --json`` (the analyses of issue 31; no
  peer is run for them)

should take <= 10 s and <= 1 GB peak RSS on 2 cores. NVTX at scale: ``gpuopt nsys nvtx`` on that export
with its NVTX ranges grown to 15.9 M (``grow_nvtx_sqlite.py``), against nsys-ai's *published* 61 s for
a 3.5 GB capture with 15.9 M ranges (nsys-ai PR #303; a figure from their machine, not a run here).

Each command runs as its own process (the CLI, as a person runs it), pinned with
``os.sched_setaffinity`` to 2 cores; wall time and peak RSS (``wait4``) are the process's, interpreter
and imports included. Peer in the same run: plain Python ``sqlite3`` SQL computing the same thing
(window functions over the operations: per device and per stream busy span, gap count and idle time
for timeline/summary, the K longest gaps for gaps; NVTX ranges joined to the runtime calls they contain
and the kernels those launched for nvtx), each in its own process on the same cores, stopped after
``--peer-timeout`` seconds.

Usage: ``python benchmarks/nsys_scale_bench.py [--file X.sqlite] [--nvtx-file Y.sqlite]`` (without
``--file`` it builds the 4.3 GB export under ``--workdir`` like ``nsys_bench.py``, ~10 GB free needed;
without ``--nvtx-file`` it grows one beside it, ~5 GB more).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

GOAL_S, GOAL_MB = 10.0, 1024.0
NSYS_AI_PUBLISHED_S = 61.0  # nsys-ai PR #303: NVTX attribution, 3.5 GB capture, 15.9 M ranges
COMMANDS: dict[str, list[str]] = {
    "timeline": ["timeline", "{file}", "--json"],
    "gaps": ["gaps", "{file}", "--sort", "duration_ns", "--limit", "5", "--json"],
    "gaps-first": ["gaps", "{file}", "--limit", "5", "--json"],
    "summary": ["summary", "{file}", "--json"],
    "nvtx": ["nvtx", "{file}", "--json"],
    # The analyses peers have (issue 31): no SQL peer here, their memory against the same goal.
    "critical-path": ["critical-path", "{file}", "--json"],
    "queue": ["queue", "{file}", "--json"],
    "iterations": ["iterations", "{file}", "--json"],
    "sequences": ["sequences", "{file}", "--json"],
}
OPS = """ops AS (
    SELECT start, end, deviceId AS d, streamId AS s FROM CUPTI_ACTIVITY_KIND_KERNEL
    UNION ALL SELECT start, end, deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY
    UNION ALL SELECT start, end, deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMSET)"""
# Per lane (a device: s NULL; or a stream): each operation with the furthest end before it.
LANES = f"""WITH {OPS},
lanes AS (
    SELECT d, NULL AS s, start, end, max(end) OVER (PARTITION BY d ORDER BY start, end
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev FROM ops
    UNION ALL
    SELECT d, s, start, end, max(end) OVER (PARTITION BY d, s ORDER BY start, end
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) FROM ops)"""
PEER_SQL = {
    "timeline": LANES
    + """
        SELECT d, s, count(*), min(start), max(end), count(*) FILTER (WHERE start > prev),
               total(start - prev) FILTER (WHERE start > prev) FROM lanes GROUP BY d, s""",
    "gaps": LANES
    + """
        SELECT d, s, prev, start, start - prev AS gap FROM lanes WHERE start > prev
        ORDER BY gap DESC, d, s, prev LIMIT 5""",
    "gaps-first": LANES
    + """
        SELECT d, s, prev, start, start - prev AS gap FROM lanes WHERE start > prev
        ORDER BY d, s IS NOT NULL, s, prev LIMIT 5""",
    "nvtx": """
        SELECT n.text, count(DISTINCT k.rowid), total(k.end - k.start)
        FROM NVTX_EVENTS n
        JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
          ON r.globalTid = n.globalTid AND r.start >= n.start AND r.end <= n.end
        JOIN CUPTI_ACTIVITY_KIND_KERNEL k
          ON k.correlationId = r.correlationId AND k.globalPid / 16777216 = r.globalTid / 16777216
        WHERE n.eventType = 59 GROUP BY n.text""",
}
PEER_SQL["summary"] = PEER_SQL["timeline"]


def cores() -> set[int]:
    have = sorted(os.sched_getaffinity(0))
    return set(have[:2])


def run_one(argv: list[str], timeout: float, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Runs argv in its own process; wall seconds, peak RSS (MB) and CPU seconds from wait4."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + timeout
    out = b""
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
            return {"error": f"stopped after {timeout:.0f} s", "rss_mb": usage.ru_maxrss / 1024}
        time.sleep(0.02)
    seconds = time.perf_counter() - started
    out = proc.stdout.read() if proc.stdout else b""
    err = proc.stderr.read() if proc.stderr else b""
    result: dict[str, Any] = {
        "seconds": seconds,
        "rss_mb": usage.ru_maxrss / 1024,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "stdout_bytes": len(out),
    }
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        result["error"] = f"exit {code}: {err.decode(errors='replace').strip()[-300:]}"
    else:
        result["out"] = out.decode(errors="replace")
    return result


def gpuopt_facts(command: str, out: str) -> str:
    """A short check of the command's answer (row counts, totals), to read beside the peer's."""
    doc = json.loads(out)["data"]
    if command in ("timeline", "summary"):
        devices = doc["timeline"]["devices"]
        streams = sum(len(d["streams"]) for d in devices)
        gaps = sum(d["busy"]["gaps"]["count"] if "busy" in d else d["gaps"]["count"] for d in devices)
        return f"{len(devices)} device(s), {streams} stream(s), {gaps} device gaps"
    table = doc["table"]
    rows = table["rows"]
    if command not in ("gaps", "gaps-first", "nvtx"):
        return f"{table.get('total_rows', len(rows))} rows"
    if command == "gaps":
        return f"longest gap {rows[0]['duration_ns']} ns" if rows else "no gaps"
    if command == "gaps-first":
        return f"first gap {rows[0]['duration_ns']} ns" if rows else "no gaps"
    with_kernels = [r["kernels"] for r in rows if r["kernels"]]
    return f"{len(with_kernels)} ranges with kernels, {sum(with_kernels)} kernels in them"


def peer_worker(file: str, command: str) -> None:
    import sqlite3

    con = sqlite3.connect(f"file:{file}?mode=ro&immutable=1", uri=True)
    rows = con.execute(PEER_SQL[command]).fetchall()
    if command == "gaps":
        print(f"longest gap {rows[0][4]} ns" if rows else "no gaps")
    elif command == "gaps-first":
        print(f"first gap {rows[0][4]} ns" if rows else "no gaps")
    elif command == "nvtx":
        print(f"{len(rows)} ranges with kernels, {sum(r[1] for r in rows)} kernels in them")
    else:
        devices = [r for r in rows if r[1] is None]
        gaps = sum(r[5] for r in devices)
        print(f"{len(devices)} device(s), {len(rows) - len(devices)} stream(s), {gaps} device gaps")


def ensure_nvtx_file(file: Path, nvtx_file: Path | None) -> Path:
    if nvtx_file is not None:
        return nvtx_file
    target = file.with_name(file.stem + "-nvtx15.9M.sqlite")
    if target.is_file():
        return target
    import nsys_bench

    partial = target.with_suffix(".partial.sqlite")
    print(f"growing NVTX ranges into {target} ...", flush=True)
    started = time.perf_counter()
    grow = Path(__file__).resolve().parent / "grow_nvtx_sqlite.py"
    subprocess.run([sys.executable, str(grow), str(nsys_bench.SOURCE), str(file), str(partial)], check=True)
    partial.chmod(0o444)
    os.replace(partial, target)
    print(f"grown in {time.perf_counter() - started:.0f} s: {target.stat().st_size / 1e9:.2f} GB", flush=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--file", type=Path, help="the grown export (default: build it as nsys_bench.py)")
    parser.add_argument("--nvtx-file", type=Path, help="the export with 15.9 M NVTX ranges (default: grow)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/gpuopt-nsys-bench"))
    parser.add_argument("--reps", type=int, default=32768)
    parser.add_argument(
        "--commands",
        default="timeline,gaps,gaps-first,summary,nvtx,nvtx-at-scale,critical-path,queue,iterations,sequences",
    )
    parser.add_argument("--peers", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per gpuopt run")
    parser.add_argument("--peer-timeout", type=float, default=300.0, help="seconds per peer run")
    parser.add_argument("--peer-worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer_worker:
        peer_worker(*args.peer_worker)
        return

    import nsys_bench

    file = args.file or nsys_bench.build(args.workdir, args.reps)
    pinned = cores()
    os.sched_setaffinity(0, pinned)  # children inherit it
    env = None  # the children run this interpreter's gpuopt (an installed wheel or an editable install)
    wanted = args.commands.split(",")
    nvtx_file = ensure_nvtx_file(file, args.nvtx_file) if "nvtx-at-scale" in wanted else None
    print(
        f"file: {file} ({file.stat().st_size / 1e9:.2f} GB); pinned to cores {sorted(pinned)} of "
        f"{os.cpu_count()}; load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}",
        flush=True,
    )
    rows: list[tuple[str, str, dict[str, Any], str]] = []
    peers: dict[tuple[str, Path], tuple[dict[str, Any], str]] = {}
    for name in wanted:
        command, path = ("nvtx", nvtx_file) if name == "nvtx-at-scale" else (name, file)
        if command not in COMMANDS or path is None:
            continue
        argv = [sys.executable, "-m", "gpuopt", "nsys", *(a.format(file=path) for a in COMMANDS[command])]
        ours = run_one(argv, args.timeout, env)
        facts = gpuopt_facts(command, ours.pop("out")) if "out" in ours else ""
        rows.append((name, "gpuopt", ours, facts))
        print(json.dumps({"command": name, "impl": "gpuopt", **ours, "facts": facts}), flush=True)
        if args.peers and command in PEER_SQL:
            sql = PEER_SQL[command]
            if (sql, path) not in peers:  # summary's peer is timeline's: run the SQL once
                peer = run_one(
                    [sys.executable, __file__, "--peer-worker", str(path), command], args.peer_timeout
                )
                peers[(sql, path)] = (peer, peer.pop("out", "").strip())
            peer, pfacts = peers[(sql, path)]
            rows.append((name, "sqlite3-sql", peer, pfacts))
            print(json.dumps({"command": name, "impl": "sqlite3-sql", **peer, "facts": pfacts}), flush=True)
    report(rows)


def report(rows: list[tuple[str, str, dict[str, Any], str]]) -> None:
    print()
    head = ("command", "implementation", "wall s", "cpu s", "peak MB", "vs gpuopt")
    print("{:<14} {:<22} {:>8} {:>8} {:>8} {:>10}  check".format(*head))
    for name, impl, r, facts in rows:
        ours = next((o for n, i, o, _ in rows if n == name and i == "gpuopt"), {})
        wall = f"{r['seconds']:.1f}" if "seconds" in r else "—"
        cpu = f"{r['cpu_s']:.1f}" if "cpu_s" in r else "—"
        ratio = ""
        if "seconds" in ours and "error" not in ours:
            if "seconds" in r and "error" not in r and impl != "gpuopt":
                ratio = f"{r['seconds'] / ours['seconds']:.1f}x"
            elif "stopped" in r.get("error", "") and impl != "gpuopt":
                ratio = f">{float(r['error'].split()[2]) / ours['seconds']:.1f}x"
        if impl == "gpuopt" and "error" not in r:
            met = r["seconds"] <= GOAL_S and r["rss_mb"] <= GOAL_MB
            check = f"goal <= {GOAL_S:g} s, <= {GOAL_MB:g} MB: {'met' if met else 'NOT met'}; {facts}"
        else:
            check = r.get("error") or facts
        print(f"{name:<14} {impl:<22} {wall:>8} {cpu:>8} {r.get('rss_mb', 0):>8.0f} {ratio:>10}  {check}")
        if name == "nvtx-at-scale" and impl == "gpuopt" and "seconds" in r and "error" not in r:
            ratio = f"{NSYS_AI_PUBLISHED_S / r['seconds']:.1f}x"
            print(
                f"{name:<14} {'nsys-ai (published)':<22} {NSYS_AI_PUBLISHED_S:>8.1f} {'—':>8} {'—':>8} "
                f"{ratio:>10}  nsys-ai PR #303: 3.5 GB, 15.9 M ranges, their machine (not run here)"
            )
    print(f"(each a process of its own, interpreter included; load average now {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
