"""SASS scan throughput: gpuopt's one-pass Rust scanner against a Python regex line scan.

Builds ~1 GB of real ``cuobjdump -sass`` text by repeating the fixtures (every copy is a complete
listing: fatbin headers, ``code for``, functions closed by dots), scans it with ``gpuopt.sass.scan``,
then runs a plain Python regex line scan (opcode histogram per function: the least a Python tool
does) in the same process, and prints both throughputs, the ratio and peak RSS.

Run with a release build of the native module::

    maturin develop --release && python benchmarks/sass_bench.py [--gb 1.0] [--peer-mb 256]
"""

from __future__ import annotations

import argparse
import re
import resource
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures"
SOURCES = [
    FIXTURES / "h200/sass/kernels_sm90.cuobjdump.sass",
    FIXTURES / "h200/probe/sass_fatbin.txt",
]
OUT = ROOT / "benchmarks" / "out"

_INSTR = re.compile(rb"^\s*/\*[0-9a-f]+\*/\s+(?:@!?\w+\s+)?([A-Z][A-Za-z0-9_.]*)")


def build(target_bytes: int) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"sass_{target_bytes >> 20}MiB.sass"
    if path.exists() and path.stat().st_size >= target_bytes:
        return path
    unit = b"".join(p.read_bytes() for p in SOURCES)
    copies = max(1, target_bytes // len(unit))
    block = unit * max(1, min(copies, (64 << 20) // len(unit)))
    written = 0
    with path.open("wb") as fh:
        while written + len(block) <= copies * len(unit):
            fh.write(block)
            written += len(block)
        while written < copies * len(unit):
            fh.write(unit)
            written += len(unit)
    return path


def python_regex_scan(path: Path, limit_bytes: int) -> tuple[int, int, int]:
    """Per-function opcode histograms with one regex per line; returns (bytes, functions, instructions)."""
    functions: list[Counter[bytes]] = []
    current: Counter[bytes] | None = None
    seen = 0
    with path.open("rb") as fh:
        for line in fh:
            seen += len(line)
            if b"Function : " in line:
                current = Counter()
                functions.append(current)
            elif current is not None:
                m = _INSTR.match(line)
                if m:
                    current[m.group(1)] += 1
            if limit_bytes and seen >= limit_bytes:
                break
    return seen, len(functions), sum(sum(c.values()) for c in functions)


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    """CPU seconds of this process, all threads (wall time misleads on a shared machine)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gb", type=float, default=1.0, help="size of the generated listing (GB)")
    parser.add_argument("--peer-mb", type=int, default=256, help="MB the Python peer scans (0 = all)")
    args = parser.parse_args()

    from gpuopt import sass
    from gpuopt.provenance import native_build

    build_info = native_build()
    if build_info.profile != "release":
        print(f"warning: the native module is a {build_info.profile} build; run `maturin develop --release`")
    path = build(int(args.gb * 1e9))
    size = path.stat().st_size
    print(f"input: {path} ({size / 1e9:.3f} GB, cuobjdump text; repeated fixtures)")

    import os

    threads = os.environ.get("RAYON_NUM_THREADS") or str(os.cpu_count())
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; gpuopt threads: {threads}")
    sass.scan(FIXTURES / "h200/probe/sass_cubin.txt")  # warm-up: imports, catalog
    rss_before = rss_mib()
    c0, t0 = cpu_s(), time.perf_counter()
    result = sass.scan(path)
    t_rust, c_rust = time.perf_counter() - t0, cpu_s() - c0
    rss_after = rss_mib()
    s = result.summary
    rust_gbps = size / t_rust / 1e9
    print(
        f"gpuopt.sass.scan: {t_rust:.2f} s wall, {c_rust:.2f} s CPU; {rust_gbps:.2f} GB/s wall, "
        f"{size / c_rust / 1e9:.2f} GB per CPU-second; {s.function_count} functions, {s.instruction_count} "
        f"instructions; peak RSS {rss_after:.0f} MiB (+{rss_after - rss_before:.0f} MiB during the scan, "
        f"tables included)"
    )

    limit = 0 if args.peer_mb == 0 else args.peer_mb * 1_000_000
    c0, t0 = cpu_s(), time.perf_counter()
    seen, n_fn, n_ins = python_regex_scan(path, limit)
    t_py, c_py = time.perf_counter() - t0, cpu_s() - c0
    py_gbps = seen / t_py / 1e9
    print(
        f"python regex line scan: {t_py:.2f} s wall, {c_py:.2f} s CPU on {seen / 1e9:.3f} GB; "
        f"{py_gbps:.3f} GB/s wall, {seen / c_py / 1e9:.3f} GB per CPU-second "
        f"({n_fn} functions, {n_ins} instructions incl. padding)"
    )
    print(
        f"ratio gpuopt / python regex: {rust_gbps / py_gbps:.1f}x (wall), "
        f"{(size / c_rust) / (seen / c_py):.1f}x (per CPU-second)"
    )
    goal = 1.0
    print(f"goal >= {goal} GB/s wall: {'met' if rust_gbps >= goal else 'NOT met'}")
    sys.exit(0)


if __name__ == "__main__":
    main()
