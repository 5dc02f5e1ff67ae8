"""A/A of the regression gate on the bundled CPU example: how often does ``gpuopt gate check`` fail when the
current code *is* the baseline's code?

Sets up the example (``gpuopt example run``: the Target with its 25 % minimum effect, 5 pairs per case over
2 cases, same-process, 10 samples per call), saves the original's calls as the baseline ``main`` (the
reference role of the no-effect target), then runs ``gpuopt gate check main --source project/original``
``--runs`` times with seeds 1..N (each a fresh paired, interleaved measurement: a new seed is a new
request, so nothing is deduplicated), exactly as CI would, and counts the exits that are not 0.

    python benchmarks/gate_aa.py [--runs 20] [--dir DIR] [--keep]

The goal of issue 32: at most 1 failing gate in 20. Inputs and outputs go under benchmarks/out/gate_aa
(git-ignored) unless --dir names an example folder made earlier.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "gate_aa"
GOAL_FAILURES = 1


def gpuopt(*args: str, cwd: Path | None = None) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "gpuopt", *args, "--json"],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )
    try:
        return done.returncode, json.loads(done.stdout)
    except json.JSONDecodeError:
        sys.exit(
            f"gpuopt {' '.join(args)} printed no envelope (exit {done.returncode}): {done.stderr[-2000:]}"
        )


def setup(directory: Path) -> None:
    if (directory / "root").is_dir():
        return
    code, env = gpuopt("example", "run", str(directory))
    if code != 0:
        sys.exit(f"example run failed: {env['errors']}")
    steps = env["data"]["steps"]
    source = next(s["record"] for s in steps if s["step"] == "target" and s["subject"] == "no_effect")
    code, env = gpuopt(
        "gate", "save", "main", "--root", "root", "--from", source, "--role", "reference", cwd=directory
    )
    if code != 0:
        sys.exit(f"gate save failed: {env['errors']}")


def one(directory: Path, seed: int, pairs: int | None) -> dict[str, Any]:
    started = time.monotonic()
    extra = [] if pairs is None else ["--pairs", str(pairs)]
    code, env = gpuopt(
        "gate",
        "check",
        "main",
        "--root",
        "root",
        "--source",
        "project/original",
        "--seed",
        str(seed),
        *extra,
        cwd=directory,
    )
    if not env["ok"]:
        sys.exit(f"gate check could not run (exit {code}): {env['errors']}")
    data = env["data"]
    result = data["result"] or {}
    primary = ((result.get("statistics") or {}).get("primary") or {}).get("comparison") or {}
    return {
        "seed": seed,
        "exit": code,
        "outcome": data["outcome"],
        "estimate_pct": primary.get("estimate_pct"),
        "ci_low_pct": primary.get("ci_low_pct"),
        "ci_high_pct": primary.get("ci_high_pct"),
        "n": primary.get("n"),
        "deduplicated": any(a["deduplicated"] for a in data["attempts"]),
        "elapsed_s": time.monotonic() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--dir", type=Path, help="An example folder to reuse (default: a fresh one)")
    parser.add_argument("--keep", action="store_true", help="Keep the example folder")
    parser.add_argument("--pairs", type=int, help="Pairs per case (default: the baseline's, 5)")
    args = parser.parse_args()
    directory = args.dir or OUT / "example"
    if args.dir is None and directory.exists():
        shutil.rmtree(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    setup(directory)
    print(f"example ready in {time.monotonic() - started:.0f} s: {directory}")
    rows = []
    for seed in range(1, args.runs + 1):
        row = one(directory, seed, args.pairs)
        rows.append(row)
        ci = "" if row["ci_low_pct"] is None else f"[{row['ci_low_pct']:+.2f}, {row['ci_high_pct']:+.2f}]"
        print(
            f"seed {seed:>3}: exit {row['exit']:>2} {row['outcome']:<13} "
            f"effect {row['estimate_pct'] or 0:+6.2f} % "
            f"{ci:<18} n={row['n']} {row['elapsed_s']:.1f} s load {os.getloadavg()[0]:.1f}"
            + (" (deduplicated)" if row["deduplicated"] else "")
        )
    failed = [r for r in rows if r["exit"] != 0]
    widths = [r["ci_high_pct"] - r["ci_low_pct"] for r in rows if r["ci_low_pct"] is not None]
    print(
        f"\nA/A gates: {len(failed)} of {len(rows)} failed (goal <= {GOAL_FAILURES}); outcomes "
        f"{ {o: sum(r['outcome'] == o for r in rows) for o in sorted({r['outcome'] for r in rows})} }; "
        f"median CI width {sorted(widths)[len(widths) // 2] if widths else float('nan'):.2f} points; "
        f"{sum(r['elapsed_s'] for r in rows):.0f} s of checks"
    )
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"rows-pairs{args.pairs or 'default'}.json").write_text(json.dumps(rows, indent=2))
    if args.dir is None and not args.keep:
        shutil.rmtree(directory)
    sys.exit(0 if len(failed) <= GOAL_FAILURES else 1)


if __name__ == "__main__":
    main()
