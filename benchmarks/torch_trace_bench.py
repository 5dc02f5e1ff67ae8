"""Benchmark: load a ~1 GB Kineto trace and build the op and kernel tables, against HTA.

Builds the trace under ``--out-dir`` (default ``/tmp/gpuopt-torch-bench``, never committed) by
repeating the H200 fixture's events shifted in time (each copy after the previous one, with its
correlation / External / flow ids offset so links stay one-to-one), then measures in child processes
pinned to 2 CPUs:

* gpuopt: ``torch_trace.open`` + ``.ops()`` + ``.kernels()``: wall time and peak RSS of the process.
* HTA (``HolisticTraceAnalysis``, optional, from ``--hta-python`` or this interpreter): ``TraceAnalysis``
  load + ``get_gpu_kernel_breakdown`` + a pandas group-by of ``cpu_op`` durations (HTA has no per-op
  table), with a resident-memory guard (``--peer-rss-limit-gb``) so it cannot exhaust a shared machine.
  If HTA cannot finish at full size, both tools are also measured at ``--peer-size-mb`` so the
  ratio is still taken at equal input.
* If HTA is not installed at all: a plain ``json.load`` implementation of the same two tables (and
  the output says so).

Then, in the same run (issue 16), the whole of ``gpuopt torch summary`` as a library call (parse, link,
every summary breakdown) against ``orjson.loads`` of the same file alone (parse only, no tables; the
``bench`` extra installs orjson), as MB/s, with the ratio to Perfetto's trace processor's published
177 MB/s JSON parse rate (google/perfetto PR #1641) and peak RSS as a multiple of the file size.

Goals: issue 5, gpuopt ≤ 10 s and ≤ 1.5 GB RSS at 1 GB on 2 cores; issue 16, summary ≥ 3x 177 MB/s
(≥ 531 MB/s) and RSS ≤ 1.5x the file. Needs a release build of the native module (``maturin develop
--release``); the script says which build it measured.

    python benchmarks/torch_trace_bench.py [--size-mb 1024] [--hta-python /path/to/venv/bin/python]
        [--no-peer] [--trace EXISTING.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _fixture() -> Path:
    """The H200 trace: from ``../shared`` beside the checkout, else the repository's packed copy."""
    beside = ROOT.parent / "shared" / "fixtures" / "h200" / "torch" / "eager_trace.json"
    if beside.exists():
        return beside
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_data import unpacked

    return Path(unpacked()) / "h200" / "torch" / "eager_trace.json"


CPUS = 2

GPUOPT_CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
from gpuopt import torch_trace
from gpuopt.provenance import native_build
trace = torch_trace.open(sys.argv[1])
t1 = time.perf_counter()
ops = trace.ops()
kernels = trace.kernels()
t2 = time.perf_counter()
print(json.dumps({"seconds": t2 - t0, "load_seconds": t1 - t0, "tables_seconds": t2 - t1,
                  "ops": ops.height, "kernels": kernels.height, "kernel_count": int(kernels["count"].sum()),
                  "profile": native_build().profile,
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

# `gpuopt torch summary` without the CLI around it: parse, link, every breakdown.
SUMMARY_CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
from gpuopt import torch_trace
trace = torch_trace.open(sys.argv[1])
t1 = time.perf_counter()
doc = trace.summary()
t2 = time.perf_counter()
print(json.dumps({"seconds": t2 - t0, "load_seconds": t1 - t0, "tables_seconds": t2 - t1,
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

# orjson's parse alone: the fastest Python JSON parser, building the whole tree, nothing else.
ORJSON_CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
import orjson
with open(sys.argv[1], "rb") as f:
    doc = orjson.loads(f.read())
t1 = time.perf_counter()
print(json.dumps({"seconds": t1 - t0, "events": len(doc["traceEvents"]),
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

PERFETTO_MB_S = 177.0

HTA_CHILD = """
import json, logging, resource, sys, time, warnings
warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
analysis = TraceAnalysis(trace_dir=sys.argv[1])
t1 = time.perf_counter()
_, kernels = analysis.get_gpu_kernel_breakdown(visualize=False, num_kernels=10**9, duration_ratio=1.0)
df = analysis.t.get_trace(next(iter(analysis.t.traces)))
sym = analysis.t.symbol_table.get_sym_id_map()
ops = df[df["cat"] == sym.get("cpu_op", -1)].groupby("name")["dur"].agg(["count", "sum"])
t2 = time.perf_counter()
print(json.dumps({"seconds": t2 - t0, "load_seconds": t1 - t0, "tables_seconds": t2 - t1,
                  "ops": len(ops), "kernels": len(kernels),
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

# The same two tables from json.load, used only when HTA is not installed.
JSON_CHILD = """
import json, resource, statistics, sys, time
from collections import defaultdict
t0 = time.perf_counter()
events = json.load(open(sys.argv[1]))["traceEvents"]
t1 = time.perf_counter()
kernels = defaultdict(list)
ops = defaultdict(lambda: [0, 0])
for e in events:
    cat = e.get("cat")
    if e.get("ph") != "X":
        continue
    if cat == "kernel":
        kernels[e["name"]].append(e["dur"])
    elif cat == "cpu_op":
        o = ops[e["name"]]
        o[0] += 1
        o[1] += e["dur"]
table = {n: (len(d), sum(d), statistics.median(d), min(d), max(d)) for n, d in kernels.items()}
t2 = time.perf_counter()
print(json.dumps({"seconds": t2 - t0, "load_seconds": t1 - t0, "tables_seconds": t2 - t1,
                  "ops": len(ops), "kernels": len(table),
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def _ns_text(ns: int) -> str:
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return f"{sign}{ns // 1000}.{ns % 1000:03d}"


def _ns(value: Any) -> int:
    text = repr(value) if isinstance(value, float) else str(value)
    whole, _, frac = text.partition(".")
    frac = (frac + "000")[:3]
    sign = -1 if whole.startswith("-") else 1
    return sign * (abs(int(whole)) * 1000 + int(frac))


def build_trace(path: Path, size_mb: int) -> dict[str, Any]:
    """Writes a trace of about ``size_mb`` MiB: the fixture's events repeated, shifted in time."""
    doc = json.loads(_fixture().read_text())
    events = doc.pop("traceEvents")
    starts = [_ns(e["ts"]) for e in events if "ts" in e and e.get("ph") == "X" and e.get("cat") != "Trace"]
    ends = [
        _ns(e["ts"]) + _ns(e["dur"])
        for e in events
        if "ts" in e and e.get("ph") == "X" and e.get("cat") != "Trace"
    ]
    period = max(ends) - min(starts) + 1_000_000  # one copy, then 1 ms of nothing
    ids = [
        e["args"][k]
        for e in events
        for k in ("correlation", "External id")
        if isinstance(e.get("args"), dict) and isinstance(e["args"].get(k), int)
    ]
    id_step = max(ids) + 1
    templates = []
    for e in events:
        if e.get("ph") == "M" or e.get("cat") == "Trace":
            continue
        e = json.loads(json.dumps(e))
        fields: dict[str, int] = {}
        if "ts" in e:
            fields["ts"] = _ns(e["ts"])
            e["ts"] = "@ts@"
        if e.get("ph") in ("s", "f") and isinstance(e.get("id"), int):
            fields["id"] = e["id"]
            e["id"] = "@id@"
        for key, tag in (("correlation", "corr"), ("External id", "ext")):
            if isinstance(e.get("args"), dict) and isinstance(e["args"].get(key), int):
                fields[tag] = e["args"][key]
                e["args"][key] = f"@{tag}@"
        text = json.dumps(e).replace("{", "{{").replace("}", "}}")
        for tag in fields:
            text = text.replace(f'"@{tag}@"', "{" + tag + "}")
        templates.append((text, fields))
    head = [json.dumps(e) for e in events if e.get("ph") == "M" or e.get("cat") == "Trace"]
    target = size_mb * 2**20
    copies = 0
    written = 0
    with path.open("w") as out:
        header = {k: v for k, v in doc.items()}
        out.write(json.dumps(header)[:-1] + ', "traceEvents": [\n')
        out.write(",\n".join(head))
        while written < target:
            shift, id_shift = copies * period, copies * id_step
            chunk = ",\n".join(
                text.format(
                    **{
                        tag: (_ns_text(v + shift) if tag == "ts" else v + id_shift)
                        for tag, v in fields.items()
                    }
                )
                for text, fields in templates
            )
            out.write(",\n" + chunk)
            written += len(chunk) + 2
            copies += 1
        out.write("\n]}\n")
        out.flush()
        # Written back now, not while the first measurement runs: the kernel's writeback of a freshly
        # written 1 GB competes for the same two CPUs (it cost the first summary run a third of its rate).
        os.fsync(out.fileno())
    return {"copies": copies, "events": copies * len(templates) + len(head), "bytes": path.stat().st_size}


def _pin() -> None:
    cpus = sorted(os.sched_getaffinity(0))[:CPUS]
    os.sched_setaffinity(0, cpus)


def run_child(python: str, code: str, arg: str, rss_limit_gb: float, timeout_s: float) -> dict[str, Any]:
    """Runs ``code`` in a child pinned to 2 CPUs; kills it past the RSS limit or the timeout."""
    env = dict(os.environ, RAYON_NUM_THREADS=str(CPUS), POLARS_MAX_THREADS=str(CPUS), OMP_NUM_THREADS="1")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([python, "-c", code, arg], stdout=out, stderr=err, env=env, preexec_fn=_pin)
        peak = [0]
        reason: list[str] = []
        done = threading.Event()

        def guard() -> None:
            start = time.monotonic()
            while not done.is_set():
                try:
                    status = Path(f"/proc/{proc.pid}/status").read_text().splitlines()
                    rss = int(next(line for line in status if line.startswith("VmRSS")).split()[1])
                    peak[0] = max(peak[0], rss)
                except (OSError, StopIteration, ValueError):
                    pass
                if peak[0] > rss_limit_gb * 2**20:
                    reason.append(f"killed: resident memory passed {rss_limit_gb} GB")
                    proc.kill()
                elif time.monotonic() - start > timeout_s:
                    reason.append(f"killed: still running after {timeout_s:.0f} s")
                    proc.kill()
                time.sleep(0.05)

        watcher = threading.Thread(target=guard, daemon=True)
        watcher.start()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        done.set()
        watcher.join()
        out.seek(0)
        err.seek(0)
        lines = out.read().decode().strip().splitlines()
        if proc.returncode != 0 or not lines:
            tail = err.read().decode().strip().splitlines()[-3:]
            return {"failed": reason[0] if reason else f"exit {proc.returncode}: {' | '.join(tail)}"}
        result: dict[str, Any] = json.loads(lines[-1])
        result["rss_kib"] = max(result["rss_kib"], peak[0])
        result["cpu_seconds"] = usage.ru_utime + usage.ru_stime
        return result


def _hta_python(explicit: str | None) -> str | None:
    candidates = [explicit] if explicit else [sys.executable]
    for python in candidates:
        if python and subprocess.run([python, "-c", "import hta"], capture_output=True).returncode == 0:
            return python
    return None


def _line(label: str, r: dict[str, Any]) -> str:
    if "failed" in r:
        return f"  {label:<8} did not finish ({r['failed']})"
    return (
        f"  {label:<8} {r['seconds']:7.2f} s (load {r['load_seconds']:.2f} s,"
        f" tables {r['tables_seconds']:.2f} s), CPU {r['cpu_seconds']:.2f} s,"
        f" peak RSS {r['rss_kib'] / 2**20:.2f} GB,"
        f" {r['ops']} op names, {r['kernels']} kernel names"
    )


def measure(path: Path, peer_python: str | None, peer_code: str, args: argparse.Namespace) -> None:
    mine = run_child(sys.executable, GPUOPT_CHILD, str(path), rss_limit_gb=args.rss_limit_gb, timeout_s=600)
    print(_line("gpuopt", mine))
    if "failed" not in mine:
        if path.stat().st_size >= 2**30:
            ok = mine["seconds"] <= 10 and mine["rss_kib"] <= 1.5 * 2**20
            print(f"  goal at 1 GB (<= 10 s, <= 1.5 GB): {'met' if ok else 'NOT met'}")
        if mine["profile"] != "release":
            print(
                f"  note: a {mine['profile']} build of the native module; `maturin develop --release` first"
            )
    if peer_python is None:
        return
    with tempfile.TemporaryDirectory() as folder:
        os.symlink(path, Path(folder) / "rank0.json")
        arg = folder if peer_code is HTA_CHILD else str(path)
        peer = run_child(
            peer_python, peer_code, arg, rss_limit_gb=args.peer_rss_limit_gb, timeout_s=args.peer_timeout_s
        )
    label = "HTA" if peer_code is HTA_CHILD else "json"
    print(_line(label, peer))
    if "failed" not in peer and "failed" not in mine:
        print(
            f"  ratio    {label} / gpuopt: time {peer['seconds'] / mine['seconds']:.1f}x,"
            f" CPU {peer['cpu_seconds'] / mine['cpu_seconds']:.1f}x,"
            f" peak RSS {peer['rss_kib'] / mine['rss_kib']:.1f}x"
        )
    return


def _rate_line(label: str, r: dict[str, Any], mb: float) -> str:
    if "failed" in r:
        return f"  {label:<8} did not finish ({r['failed']})"
    rate = mb / r["seconds"]
    rss = r["rss_kib"] * 1024 / 1e6
    return (
        f"  {label:<8} {r['seconds']:7.2f} s, {rate:6.0f} MB/s ({rate / PERFETTO_MB_S:.2f}x Perfetto's"
        f" {PERFETTO_MB_S:.0f} MB/s), CPU {r['cpu_seconds']:.2f} s, peak RSS {rss:.0f} MB"
        f" ({rss / mb:.2f}x the file)"
    )


def _summary_runs(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """``--rounds`` runs of the summary child; the median run by wall time (each run's rate printed)."""
    runs = [
        run_child(sys.executable, SUMMARY_CHILD, str(path), rss_limit_gb=args.rss_limit_gb, timeout_s=600)
        for _ in range(args.rounds)
    ]
    done = sorted((r for r in runs if "failed" not in r), key=lambda r: r["seconds"])
    if not done:
        return runs[0]
    mb = path.stat().st_size / 1e6
    rates = ", ".join(f"{mb / r['seconds']:.0f}" for r in runs if "failed" not in r)
    median = done[len(done) // 2]
    median["rounds"] = f"median of {len(done)} runs (MB/s: {rates})"
    return median


def _orjson(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    if subprocess.run([sys.executable, "-c", "import orjson"], capture_output=True).returncode != 0:
        return {"failed": "orjson is not installed (pip install orjson, or the bench extra)"}
    return run_child(
        sys.executable, ORJSON_CHILD, str(path), rss_limit_gb=args.peer_rss_limit_gb, timeout_s=600
    )


def measure_rates(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Summary MB/s and RSS vs orjson's parse alone and Perfetto's published JSON rate (issue 16)."""
    mb = path.stat().st_size / 1e6
    summary = _summary_runs(path, args)
    parse = _orjson(path, args)
    print(f"rates on {mb:.0f} MB ({path.name}), goal >= {3 * PERFETTO_MB_S:.0f} MB/s, RSS <= 1.5x file:")
    print(_rate_line("summary", summary, mb))
    if "rounds" in summary:
        print(f"           {summary['rounds']}")
    print(_rate_line("orjson", parse, mb))
    if "failed" not in summary and "failed" not in parse:
        print(f"  summary vs orjson parse alone: {parse['seconds'] / summary['seconds']:.2f}x faster")
    return parse


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--peer-size-mb", type=int, default=128, help="second, smaller equal-input size")
    parser.add_argument("--out-dir", type=Path, default=Path(tempfile.gettempdir()) / "gpuopt-torch-bench")
    parser.add_argument("--hta-python", help="a Python with HolisticTraceAnalysis installed")
    parser.add_argument("--rss-limit-gb", type=float, default=8.0)
    parser.add_argument("--peer-rss-limit-gb", type=float, default=8.0)
    parser.add_argument("--peer-timeout-s", type=float, default=900.0)
    parser.add_argument("--keep", action="store_true", help="keep the generated traces")
    parser.add_argument("--no-peer", action="store_true", help="skip HTA / json.load (rates only)")
    parser.add_argument("--trace", type=Path, help="measure this trace instead of building one")
    parser.add_argument("--rounds", type=int, default=3, help="summary runs (the median is kept)")
    args = parser.parse_args()

    args.out_dir.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(args.out_dir).free
    if free < 3 * args.size_mb * 2**20:
        sys.exit(f"not enough free disk in {args.out_dir}: {free / 2**30:.1f} GB free")
    hta = _hta_python(args.hta_python)
    peer_python, peer_code = (hta, HTA_CHILD) if hta else (sys.executable, JSON_CHILD)
    if hta is None:
        print("HTA (HolisticTraceAnalysis) is not installed: comparing with a plain json.load implementation")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} CPUs (load average {load}), children pinned to {CPUS}")
    print("  wall times grow with other load on the machine; CPU time (all threads) does much less")
    made: list[Path] = []  # only what this run built is removed: never a --trace file or others' files
    try:
        path = args.trace or args.out_dir / f"trace_{args.size_mb}mb.json"
        if args.trace is None:
            t0 = time.perf_counter()
            made.append(path)
            built = build_trace(path, args.size_mb)
            print(
                f"built {path}: {built['bytes'] / 2**20:.0f} MiB, {built['events']:,} events"
                f" ({built['copies']} copies of the H200 trace) in {time.perf_counter() - t0:.0f} s"
            )
        parse = measure_rates(path, args)
        if "failed" in parse and args.peer_size_mb < path.stat().st_size / 2**20:
            # orjson builds the whole tree (about 9x the file): where it cannot finish at full size, both
            # are measured again at the smaller size, so the ratio is still taken at equal input.
            small = args.out_dir / f"trace_{args.peer_size_mb}mb.json"
            made.append(small)
            build_trace(small, args.peer_size_mb)
            measure_rates(small, args)
        if args.no_peer:
            return
        measure(path, peer_python, peer_code, args)
        if hta and args.peer_size_mb < args.size_mb:
            small = args.out_dir / f"trace_{args.peer_size_mb}mb.json"
            if small not in made:
                made.append(small)
                build_trace(small, args.peer_size_mb)
            print(f"equal-input comparison at {small.stat().st_size / 2**20:.0f} MiB:")
            measure(small, peer_python, peer_code, args)
    finally:
        if not args.keep:
            for built_path in made:
                built_path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
