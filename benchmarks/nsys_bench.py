"""Speed and memory of gpuopt's nsys kernel and API summaries on a grown export, against peers.

Builds (once) a large export by repeating ``h200/nsys/eager.sqlite`` in time with
``shared/recipes/grow_nsys_sqlite.py`` (32768 repetitions: 4.3 GB, 5.77M kernels, 84M runtime calls;
needs ~10 GB free), then runs each implementation in its own process and reports wall time of the
summary itself, the process's CPU time and its peak RSS:

* gpuopt: ``nsys.open(path).kernel_summary()`` / ``.api_summary()`` (median and sample stddev too);
* sqlite3-sql: plain Python ``sqlite3`` with SQL aggregates and window-function medians, the same
  statistics (the peer a person writes without gpuopt);
* nsys-stats (when ``nsys`` is found, as gpuopt finds it): NVIDIA's ``nsys stats --report
  cuda_gpu_kern_sum|cuda_api_sum --format csv`` on the same file (peak RSS is that of the nsys process);
* nsys-ai (when its ``nsys-ai`` command is installed): ``nsys-ai skill run top_kernels`` (count,
  total, avg, min, max only: no median or deviation), kernels only. It writes indexes into the file it
  reads, so it runs on a copy (made before its clock starts; needs as much disk again, and more).

Usage: ``python benchmarks/nsys_bench.py [--reps 32768] [--workdir /tmp/gpuopt-nsys-bench]``.
Goals (issue 3, on a 2-core machine): kernel summary <= 1 s and <= 300 MB; API summary <= 10 s and
<= 1 GB. Each implementation runs ``--repeat`` times (the file is then in the page cache); the best
wall time is reported with the peak RSS of that run.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
SOURCE = SHARED / "fixtures" / "h200" / "nsys" / "eager.sqlite"
GROW = SHARED / "recipes" / "grow_nsys_sqlite.py"
BYTES_PER_REP = 4_281_815_040 / 32768  # measured size of the grown file per repetition
GOALS = {"kernels": (1.0, 300.0), "api": (10.0, 1024.0)}
TABLES = {
    "kernels": ("CUPTI_ACTIVITY_KIND_KERNEL", "demangledName"),
    "api": ("CUPTI_ACTIVITY_KIND_RUNTIME", "nameId"),
}


def build(workdir: Path, reps: int) -> Path:
    target = workdir / f"eager-x{reps}.sqlite"
    if target.is_file():
        return target
    workdir.mkdir(parents=True, exist_ok=True)
    need = BYTES_PER_REP * reps * 2.3  # the copy, its growth and VACUUM's temporary copy
    free = shutil.disk_usage(workdir).free
    if free < need:
        sys.exit(
            f"nsys_bench: {free / 1e9:.1f} GB free under {workdir}, ~{need / 1e9:.1f} GB needed for "
            f"--reps {reps}; free space or pass a smaller --reps"
        )
    partial = workdir / f"eager-x{reps}.partial.sqlite"
    seed = workdir / "eager-seed.sqlite"  # a writable copy: the recipe copies its source's mode
    shutil.copyfile(SOURCE, seed)
    print(f"building {target} ({reps} repetitions of {SOURCE.name}) ...", flush=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, str(GROW), str(seed), str(partial), str(reps)], check=True)
    seed.unlink()
    partial.chmod(0o444)
    os.replace(partial, target)
    print(f"built in {time.perf_counter() - started:.0f} s: {target.stat().st_size / 1e9:.2f} GB", flush=True)
    return target


def _find_nsys() -> str | None:
    from gpuopt.tools import find_tool

    found = find_tool("nsys")
    return found.path if found else None


# --- workers (each runs in its own process, prints one JSON line) ---------------------------------


def work_gpuopt(path: Path, fact: str) -> dict[str, Any]:
    import polars  # noqa: F401  (imported before the clock starts: not the summary's cost)

    from gpuopt import nsys

    started, cpu = time.perf_counter(), time.process_time()
    report = nsys.open(path)
    frame = report.kernel_summary() if fact == "kernels" else report.api_summary()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    count = "instances" if fact == "kernels" else "num_calls"
    return {
        "seconds": seconds,
        "call_cpu_s": cpu,
        "rows": frame.height,
        "events": int(frame[count].sum()),
        "total_ns": int(frame["total_time_ns"].sum()),
    }


def work_sql(path: Path, fact: str) -> dict[str, Any]:
    import sqlite3

    table, key = TABLES[fact]
    started, cpu = time.perf_counter(), time.process_time()
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    aggregates = con.execute(
        f"SELECT {key}, count(*), sum(end - start), min(end - start), max(end - start), "
        f"sum(CAST(end - start AS REAL) * (end - start)) FROM {table} GROUP BY {key}"
    ).fetchall()
    medians = dict(
        con.execute(
            f"""WITH r AS (SELECT {key} AS k, end - start AS v,
                       row_number() OVER (PARTITION BY {key} ORDER BY end - start) AS i,
                       count(*) OVER (PARTITION BY {key}) AS n FROM {table})
                SELECT k, avg(v) FROM r WHERE i IN ((n + 1) / 2, (n + 2) / 2) GROUP BY k"""
        ).fetchall()
    )
    rows = []
    for k, n, total, lo, hi, squares in aggregates:
        var = (n * squares - total * total) / (n * (n - 1)) if n > 1 else 0.0
        rows.append((k, n, total, total / n, medians[k], lo, hi, max(var, 0.0) ** 0.5))
    names = dict(con.execute("SELECT id, value FROM StringIds").fetchall())
    rows = [(names[r[0]], *r[1:]) for r in sorted(rows, key=lambda r: -r[2])]
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "seconds": seconds,
        "call_cpu_s": cpu,
        "rows": len(rows),
        "events": sum(r[1] for r in rows),
        "total_ns": sum(r[2] for r in rows),
    }


def work_nsys_ai(path: Path, fact: str, command: str) -> dict[str, Any]:
    # nsys-ai adds indexes to the file it is given (4.3 GB -> 8.1 GB here), so it gets a copy.
    copy = path.with_name(path.stem + ".nsys-ai-copy.sqlite")
    shutil.copyfile(path, copy)
    try:
        return run_nsys_ai(copy, command)
    finally:
        copy.unlink(missing_ok=True)


def run_nsys_ai(path: Path, command: str) -> dict[str, Any]:
    started = time.perf_counter()
    done = subprocess.run(
        [
            command,
            "skill",
            "run",
            "top_kernels",
            str(path),
            "--format",
            "json",
            "--no-cache",
            "-p",
            "limit=1000",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        return {"seconds": seconds, "error": done.stderr.strip().splitlines()[-1:]}
    rows = [r for r in json.loads(done.stdout) if isinstance(r, dict) and "invocations" in r]
    return {"seconds": seconds, "rows": len(rows), "events": sum(int(r["invocations"]) for r in rows)}


def work_nsys_stats(path: Path, fact: str, command: str) -> dict[str, Any]:
    # NVIDIA's own tool: `nsys stats` runs its report script on the export (the named peer).
    report = "cuda_gpu_kern_sum" if fact == "kernels" else "cuda_api_sum"
    started = time.perf_counter()
    done = subprocess.run(
        [command, "stats", "--report", report, "--format", "csv", "--output", "-", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        return {"seconds": seconds, "error": done.stderr.strip().splitlines()[-1:]}
    lines = [line for line in done.stdout.splitlines() if line and not line.startswith("Processing [")]
    count = 2  # Instances (kernels) and Num Calls (API) are the third CSV column of both reports
    rows = list(csv.reader(lines[1:]))
    return {"seconds": seconds, "rows": len(rows), "events": sum(int(r[count]) for r in rows)}


def worker(args: argparse.Namespace) -> None:
    path = Path(args.file)
    if args.worker == "gpuopt":
        out = work_gpuopt(path, args.fact)
    elif args.worker == "sqlite3-sql":
        out = work_sql(path, args.fact)
    elif args.worker == "nsys-stats":
        out = work_nsys_stats(path, args.fact, args.nsys)
    else:
        out = work_nsys_ai(path, args.fact, args.nsys_ai)
    print(json.dumps(out))


# --- driver -------------------------------------------------------------------------------------


def measure(impl: str, fact: str, path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Runs one worker process; returns its result with wall/CPU seconds and peak RSS (wait4)."""
    command = [sys.executable, __file__, "--worker", impl, "--fact", fact, "--file", str(path)]
    if args.nsys_ai:
        command += ["--nsys-ai", args.nsys_ai]
    if args.nsys:
        command += ["--nsys", args.nsys]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + args.timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            return {"impl": impl, "fact": fact, "error": f"timed out after {args.timeout} s"}
        time.sleep(0.05)
    out = proc.stdout.read() if proc.stdout else ""
    try:
        result = json.loads(out.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"impl": impl, "fact": fact, "error": f"exit {status}: {out[-300:]}"}
    cpu = usage.ru_utime + usage.ru_stime
    return {"impl": impl, "fact": fact, "cpu_s": cpu, "rss_mb": usage.ru_maxrss / 1024, **result}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=32768, help="repetitions of eager.sqlite (32768: 4.3 GB)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/gpuopt-nsys-bench"))
    parser.add_argument("--file", help="an existing export to measure instead of building one")
    parser.add_argument("--repeat", type=int, default=2, help="runs of gpuopt (best wall time kept)")
    parser.add_argument("--peer-repeat", type=int, default=1, help="runs of each peer (best kept)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run before it is stopped")
    parser.add_argument("--peers", default="sqlite3-sql,nsys-ai", help="comma-separated peers to run")
    parser.add_argument("--facts", default="kernels,api", help="comma-separated summaries to measure")
    parser.add_argument(
        "--nsys-ai", default=shutil.which("nsys-ai"), help="the nsys-ai command, if installed"
    )
    parser.add_argument(
        "--nsys", default=_find_nsys(), help="NVIDIA's nsys, for the nsys-stats peer (found like gpuopt does)"
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--fact", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return

    path = Path(args.file) if args.file else build(args.workdir, args.reps)
    print(
        f"file: {path} ({path.stat().st_size / 1e9:.2f} GB); cpus: {os.cpu_count()}; "
        f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())}",
        flush=True,
    )
    peers = [p for p in args.peers.split(",") if p and (p != "nsys-ai" or args.nsys_ai)]
    if args.nsys and "nsys-stats" not in peers:
        peers.append("nsys-stats")
    if "nsys-ai" in args.peers and not args.nsys_ai:
        print("nsys-ai: not installed (pip install nsys-ai), skipped", flush=True)
    results: list[dict[str, Any]] = []
    for fact in [f for f in ("kernels", "api") if f in args.facts.split(",")]:
        for impl in ["gpuopt", *peers]:
            if impl == "nsys-ai" and fact == "api":
                continue  # nsys-ai has no CUDA API summary
            repeat = args.repeat if impl == "gpuopt" else args.peer_repeat
            runs = [measure(impl, fact, path, args) for _ in range(repeat)]
            ok = [r for r in runs if "seconds" in r and "error" not in r]
            best = min(ok, key=lambda r: float(r["seconds"])) if ok else runs[-1]
            results.append(best)
            print(json.dumps(best), flush=True)
    report(results)


def report(results: list[dict[str, Any]]) -> None:
    print()
    header = ("fact", "implementation", "wall s", "call cpu s", "proc cpu s", "peak MB", "vs gpuopt")
    print("{:<8} {:<14} {:>8} {:>10} {:>10} {:>8} {:>10}  check".format(*header))
    for fact in ("kernels", "api"):
        ours = next((r for r in results if r["impl"] == "gpuopt" and r["fact"] == fact), None)
        for r in (r for r in results if r["fact"] == fact):
            if "error" in r:
                print(
                    "{:<8} {:<14} {:>8} {:>10} {:>10} {:>8} {:>10}  {}".format(
                        fact, r["impl"], *"—" * 5, r["error"]
                    )
                )
                continue
            ratio = float(r["seconds"]) / float(ours["seconds"]) if ours and "seconds" in ours else None
            call_cpu = f"{float(r['call_cpu_s']):.2f}" if "call_cpu_s" in r else "—"
            check = ""
            if r["impl"] == "gpuopt":
                wall_goal, rss_goal = GOALS[fact]
                met = float(r["seconds"]) <= wall_goal and float(r["rss_mb"]) <= rss_goal
                check = f"goal <= {wall_goal:g} s, <= {rss_goal:g} MB: {'met' if met else 'NOT met'}"
            elif ours and r.get("events") is not None:
                check = "same events" if r.get("events") == ours.get("events") else "EVENT COUNTS DIFFER"
            wall, proc = f"{float(r['seconds']):.2f}", f"{float(r['cpu_s']):.2f}"
            times = f"{wall:>8} {call_cpu:>10} {proc:>10}"
            print(
                f"{fact:<8} {r['impl']!s:<14} {times} "
                f"{float(r['rss_mb']):>8.0f} {'' if ratio is None else f'{ratio:.1f}x':>10}  {check}"
            )
    print(
        f"(peak MB: each process's max RSS, interpreter included; load average now {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
