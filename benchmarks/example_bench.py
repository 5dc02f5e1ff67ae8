"""The whole evaluation loop on the bundled example (``gpuopt example run``) against its goal (under two
minutes on a 2-core machine) and against a named peer measured in the same run: the same driver calls
launched bare, one ``subprocess.run`` each, with no supervisor, gates, freezing, statistics or records.

The peer replays every driver call the example made (same requests, same subjects, same order), so the
ratio is what the evaluation core costs on top of running the workload itself.

    python benchmarks/example_bench.py [--keep]

Inputs and outputs go under benchmarks/out/example (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "example"
GOAL_S = 120.0


def run_example(directory: Path) -> tuple[float, dict[str, Any]]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "gpuopt", "example", "run", str(directory), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return time.monotonic() - started, json.loads(done.stdout)["data"]


def _subject_dirs(directory: Path) -> dict[str, Path]:
    """Object digest -> the project folder it was frozen from (original and the three candidates)."""
    from gpuopt.evaluation.store import hash_tree
    from gpuopt.models.evaluation.store import ScanLimits

    project = directory / "project"
    folders = [project / "original", *sorted((project / "candidates").iterdir())]
    exclude = [".git/**", "**/__pycache__/**"]
    return {hash_tree(f, exclude=exclude, limits=ScanLimits()).digest: f for f in folders}


def replay_requests(directory: Path, work: Path) -> list[Path]:
    """Every driver request of the example, rewritten to point at the project folders."""
    from gpuopt.evaluation.driver import build_request

    dirs = _subject_dirs(directory)
    root = directory / "root"
    cases = str(directory / "project" / "testset" / "cases.json")
    out = []
    for request_path in sorted(root.glob("invocations/*/calls/*/request.json")):
        req = json.loads(request_path.read_text())
        call_dir = work / f"{len(out):04d}"
        (call_dir / "output").mkdir(parents=True)
        req["test_set"]["path"] = cases
        req["output_dir"] = str(call_dir / "output")
        for s in req["subjects"]:
            s["path"] = str(dirs[s["digest"]])
        fields = {k: v for k, v in req.items() if k not in ("protocol", "request_digest")}
        rebuilt = build_request(fields)
        path = call_dir / "request.json"
        path.write_text(rebuilt.model_dump_json())
        out.append(path)
    return out


def run_peer(directory: Path, requests: list[Path]) -> float:
    driver = directory / "project" / "bench" / "driver.py"
    started = time.monotonic()
    for path in requests:
        subprocess.run([sys.executable, str(driver), "--request", str(path)], check=True, capture_output=True)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="Keep benchmarks/out/example afterwards.")
    args = parser.parse_args()
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    directory = OUT / "demo"
    wall, data = run_example(directory)
    rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    requests = replay_requests(directory, OUT / "peer")
    peer = run_peer(directory, requests)
    steps = {(s["step"], s["subject"]): s for s in data["steps"]}
    met = "met" if wall < GOAL_S else "NOT met"
    print(f"gpuopt example run: {wall:.1f} s wall (goal < {GOAL_S:.0f} s: {met})")
    print(f"  peak RSS of a child process: {rss_mib:.0f} MiB; {len(requests)} driver calls in the loop")
    for key in (
        ("target", "faster"),
        ("target", "no_effect"),
        ("screen", "wrong"),
        ("final_audit", "faster"),
    ):
        s = steps[key]
        print(f"  {key[0]:<11} {key[1]:<9} {s['verdict']:<12} {s['primary_verdict'] or '—'}")
    print(f"peer (the same {len(requests)} driver calls, bare subprocess.run): {peer:.1f} s")
    per_call_ms = (wall - peer) / len(requests) * 1000
    print(f"ratio gpuopt / bare calls: {wall / peer:.2f}x  (overhead {per_call_ms:.0f} ms per call, all in)")
    if not args.keep:
        shutil.rmtree(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
