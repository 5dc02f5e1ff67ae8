"""Benchmarks of the evaluation core, each against a named peer measured in the same run.

1. Freezing a source tree into the content-addressed store (parallel Rust hashing, blob dedupe) vs the
   reference system's approach: a sequential Python walk that hashes with hashlib and copies every file.
   Also a re-freeze of the unchanged tree (every blob already stored) and ``sha256sum`` over the same files.
2. Materializing the frozen tree with verification vs ``shutil.copytree`` followed by a hashlib re-hash.
3. Supervisor overhead per driver call (gated launch, logs, bundle freeze, validation, receipts) vs
   launching the same driver with ``subprocess.run``; the spec's goal is <= 50 ms per call.

Inputs are generated under benchmarks/out (git-ignored). Build the extension in release mode first
(``pip install .`` or ``maturin develop --release``): a debug build hashes several times slower.

    python benchmarks/bench_evaluation.py [--files 3000] [--mib 300] [--calls 20]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "evaluation"


def make_tree(root: Path, files: int, mib: int) -> tuple[int, int]:
    """A source-like tree: many small files, a few large ones, 10 % duplicated content."""
    if root.exists():
        shutil.rmtree(root)
    rng = random.Random(1)
    total = mib << 20
    sizes = [rng.randint(200, 40_000) for _ in range(files)]
    big = max(1, files // 200)
    rest = max(total - sum(sizes[big:]), big)
    for i in range(big):
        sizes[i] = rest // big
    written = 0
    shared = os.urandom(30_000)
    for i, size in enumerate(sizes):
        folder = root / f"pkg{i % 37}" / f"mod{i % 11}"
        folder.mkdir(parents=True, exist_ok=True)
        data = shared if i % 10 == 0 else os.urandom(size)
        (folder / f"file{i}.py").write_bytes(data)
        written += len(data)
    return files, written


def peer_freeze(source: Path, store: Path) -> str:
    """The reference system's freeze: sequential walk, hashlib per file, a copy of every file, a manifest."""
    payload = store / "payload"
    entries = []
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, source)
        for name in sorted(filenames):
            src = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            dest = payload / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            h = hashlib.sha256()
            with open(src, "rb") as f, open(dest, "wb") as out:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
                    out.write(chunk)
                os.fsync(out.fileno())
            st = os.stat(src)
            mode = st.st_mode & 0o7777
            entries.append({"path": rel, "mode": mode, "size_bytes": st.st_size, "sha256": h.hexdigest()})
    manifest = json.dumps({"entries": entries}, sort_keys=True, separators=(",", ":")).encode()
    (store / "manifest.json").write_bytes(manifest)
    return hashlib.sha256(manifest).hexdigest()


def peer_materialize(source: Path, dest: Path) -> None:
    shutil.copytree(source, dest)
    for path in sorted(dest.rglob("*")):
        if path.is_file():
            h = hashlib.sha256()
            with open(path, "rb") as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)


def _hwm_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(task: str, args: list[str]) -> None:
    """Runs one measured task in this fresh process; prints its seconds (imports excluded) and peak RSS."""
    if task.startswith("gpuopt"):
        from gpuopt.evaluation.store import Store
        from gpuopt.models.evaluation.store import ScanLimits
    start = time.perf_counter()
    if task in ("gpuopt-freeze", "gpuopt-refreeze"):
        Store(Path(args[1])).freeze(args[0], exclude=[], limits=ScanLimits())
    elif task == "peer-freeze":
        peer_freeze(Path(args[0]), Path(args[1]))
    elif task == "gpuopt-materialize":
        Store(Path(args[0])).materialize(args[1], args[2])
    elif task == "peer-materialize":
        peer_materialize(Path(args[0]), Path(args[1]))
    print(json.dumps({"seconds": time.perf_counter() - start, "hwm_mib": _hwm_mib()}))


def measure(task: str, *args: str) -> tuple[float, float]:
    """Seconds (imports excluded) and peak RSS (MiB) of one task in a fresh process."""
    done = subprocess.run([sys.executable, __file__, "--child", task, *args], capture_output=True, check=True)
    out = json.loads(done.stdout)
    return float(out["seconds"]), float(out["hwm_mib"])


def row(name: str, ours: tuple[float, float], peer: tuple[float, float], peer_name: str) -> None:
    print(
        f"{name:<34} gpuopt {ours[0]:7.3f} s {ours[1]:7.1f} MiB | {peer_name} {peer[0]:7.3f} s "
        f"{peer[1]:7.1f} MiB | speedup x{peer[0] / ours[0]:.2f}"
    )


def bench_store(files: int, mib: int) -> None:
    src = OUT / "tree"
    count, total = make_tree(src, files, mib)
    print(f"tree: {count} files, {total / 2**20:.0f} MiB, {os.cpu_count()} CPUs")
    for d in ("store", "peer-store", "copy", "peer-copy"):
        shutil.rmtree(OUT / d, ignore_errors=True)
    (OUT / "store").mkdir()
    (OUT / "peer-store").mkdir()
    subprocess.run(["sync"], check=False)
    ours = measure("gpuopt-freeze", str(src), str(OUT / "store"))
    peer = measure("peer-freeze", str(src), str(OUT / "peer-store"))
    row("freeze (cold store)", ours, peer, "python hashlib+copy")
    again = measure("gpuopt-refreeze", str(src), str(OUT / "store"))
    row("re-freeze (all blobs stored)", again, peer, "python hashlib+copy")
    start = time.perf_counter()
    listing = [str(p) for p in src.rglob("*") if p.is_file()]
    names = "\0".join(listing).encode()
    subprocess.run(["xargs", "-0", "sha256sum"], input=names, capture_output=True, check=True)
    sums = time.perf_counter() - start
    print(f"{'sha256sum (hash only, same files)':<34} {sums:7.3f} s")
    from gpuopt.evaluation.store import Store
    from gpuopt.models.evaluation.store import ScanLimits

    digest = Store(OUT / "store").freeze(src, exclude=[], limits=ScanLimits()).digest
    ours = measure("gpuopt-materialize", str(OUT / "store"), digest, str(OUT / "copy"))
    peer = measure("peer-materialize", str(src), str(OUT / "peer-copy"))
    row("materialize + verify", ours, peer, "copytree+hashlib")


def bench_calls(calls: int) -> None:
    """Per-call supervisor overhead against a bare subprocess.run of the same driver."""
    sys.path.insert(0, str(HERE.parent / "tests"))
    from eval_support import workload
    from gpuopt.evaluation import invocation, readiness
    from gpuopt.models.evaluation.invocation import Limits

    base = OUT / "calls"
    shutil.rmtree(base, ignore_errors=True)
    layout = workload.layout(base / "w")
    readiness.check(json.dumps(workload.request(layout, base / "root")).encode())
    os.environ["GPUOPT_LOCK_DIR"] = str(base / "locks")
    target = invocation.targets.load(invocation.Store(base / "root"))[0]
    step = {"pair_index": None, "case_id": "a", "order": None, "roles": ["original"], "lifecycle": "isolated"}
    plan = {"case_ids": ["a"], "pairs": None, "calls_per_case": calls, "samples_per_call": 5}
    core = {
        "operation": "readiness_smoke",
        "plan": {**plan, "warmup_per_call": 0, "seed": 1, "lifecycle": "isolated"},
        "evidence_plan": [{"call_index": i, **step} for i in range(calls)],
        "variants": {"original": {"kind": "source", "digest": target.original.digest}},
    }
    out = invocation.submit(base / "root", core, limits=Limits(), keep_workspace=True)
    st = invocation.wait(base / "root", out.invocation_id, timeout_s=600)
    assert st.summary and st.summary["verdict"] == "passed", st
    inv = base / "root" / "invocations" / out.invocation_id
    events = [json.loads(x) for x in (inv / "events.jsonl").read_text().splitlines()]
    starts = [e["at_mono_ns"] for e in events if e["event"] == "call_started"]
    finished = [e for e in events if e["event"] == "call_finished"]
    per_call = (starts[-1] - starts[0]) / 1e9 / (len(starts) - 1)
    request = inv / "calls" / "0000" / "request.json"
    scratch = base / "bare-output"
    bare = []
    for _ in range(calls):
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        req = json.loads(request.read_bytes())
        req["output_dir"] = str(scratch)
        (base / "bare-request.json").write_text(json.dumps(req))
        t0 = time.perf_counter()
        bare_argv = [*target.driver.argv, "--request", str(base / "bare-request.json")]
        subprocess.run(bare_argv, check=True, env=os.environ)
        bare.append(time.perf_counter() - t0)
    bare_mean = sum(bare) / len(bare)
    inside = sum(e["elapsed_s"] for e in finished) / len(finished)
    print(
        f"driver call via supervisor: {per_call * 1e3:7.1f} ms per call (spawn to next spawn), "
        f"{inside * 1e3:.1f} ms inside the call window"
    )
    print(f"same driver via subprocess.run: {bare_mean * 1e3:7.1f} ms per call")
    overhead = (per_call - bare_mean) * 1e3
    print(
        f"supervisor overhead per call: {overhead:7.1f} ms (goal <= 50 ms); ratio x{per_call / bare_mean:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--mib", type=int, default=300)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--child", nargs="+")
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1:])
        return
    OUT.mkdir(parents=True, exist_ok=True)
    bench_store(args.files, args.mib)
    bench_calls(args.calls)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"(peak RSS of this benchmark process: {peak:.0f} MiB)")


if __name__ == "__main__":
    main()
