"""Issue 15 on the GPU machine, through the frozen Target: ``gpuopt capture`` of the GPU example's softmax
(original, the faster candidate, and the Champion, which is still the original: the A/A), 5 captures per
variant interleaved, under nsys and under torch (the example driver's torch_trace capability), then
``gpuopt profile diff`` of original vs faster and original vs Champion (A/A), per case, plus a one-capture
diff. One command, everything written under OUT:

    python benchmarks/capture_through_target.py OUT [--nsys PATH] [--repeats 5] [--cases rows256]
        [--tools nsys,torch]

About 35 GPU driver calls (readiness smoke, baseline, 15 nsys and 15 torch captures at one case): a few
minutes on the H200. ``--cases rows256,rows512`` captures both example cases (twice the calls).

OUT/example     the example folder (project, root with the Target, Experiments and capture invocations)
OUT/diffs/      one `gpuopt profile diff --json` document per comparison (TOOL_CASE_ab|aa|single.json)
OUT/captures/   the frozen capture files, named TOOL/VARIANT_CASE_REPEAT.(sqlite|json), gzipped (fixtures)
OUT/summary.json  per comparison: flagged/tested keys, the declared FDR, and each flagged key's change and CI
OUT/log.txt     every command and its stderr

nsys is found like `gpuopt doctor` finds it (PATH, then /opt/nvidia/nsight-*), or given with --nsys. The
driver inherits LD_LIBRARY_PATH here (an nsys or torch that needs extra libraries finds them).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TOOLS = ("nsys", "torch")
VARIANTS = ["original", "candidate", "champion"]


def _log(out: Path, text: str) -> None:
    with (out / "log.txt").open("a", encoding="utf-8") as f:
        f.write(text.rstrip() + "\n")
    print(text, file=sys.stderr)


def _target(out: Path) -> tuple[Any, Path]:
    from gpuopt.evaluation import readiness
    from gpuopt.example.runner import Runner, readiness_request

    runner = Runner(out / "example", gpu=True, progress=lambda line: _log(out, line))
    runner.prepare()
    request = readiness_request("torch")
    request["driver"]["env_inherit"].append("LD_LIBRARY_PATH")
    result = readiness.check(json.dumps(request).encode(), cwd=runner.dir)
    runner.refs["target"] = result.target.model_dump()
    runner.baseline()
    runner.experiments()
    return runner, runner.dir


def _capture(out: Path, runner: Any, tool: str, repeats: int, nsys: str | None, cases: list[str]) -> str:
    from gpuopt.evaluation.capture import operations

    request: dict[str, Any] = {
        "root": "root",
        "tool": tool,
        "experiment": runner.refs["experiment:faster"],
        "plan": {
            "variants": VARIANTS,
            "repeats": repeats,
            "case_ids": cases,
            "samples_per_call": 10,
            "warmup_per_call": 3,
        },
        "limits": {"operation_timeout_s": 3000, "command_timeout_s": 300},
    }
    if tool == "nsys":
        request["nsys"] = {"trace": ["cuda", "nvtx"], "sample": "none"}
        if nsys:
            request["profiler"] = nsys
    (runner.dir / f"requests/capture-{tool}.json").write_text(json.dumps(request, indent=2) + "\n")
    started = time.monotonic()
    data = operations.run(request, cwd=runner.dir, wait=True)
    _log(out, f"capture {tool}: {time.monotonic() - started:.0f} s\n  " + "\n  ".join(data.summary))
    if data.result is None:
        raise SystemExit(f"capture {tool} did not complete: {data.summary}")
    return data.result.invocation_id


def _diff(out: Path, root: Path, name: str, base: list[str], cand: list[str]) -> dict[str, Any]:
    argv = [
        sys.executable,
        "-m",
        "gpuopt",
        "profile",
        "diff",
        "--root",
        str(root),
        "--marker",
        "measure",
        "--json",
        "--limit",
        "0",
    ]
    for b in base:
        argv += ["--baseline", b]
    for c in cand:
        argv += ["--candidate", c]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    _log(out, f"$ {' '.join(argv)}\n{done.stderr}")
    (out / "diffs" / f"{name}.json").write_text(done.stdout)
    if done.returncode != 0:
        return {"exit": done.returncode, "stderr": done.stderr[-2000:]}
    data = json.loads(done.stdout)["data"]
    rows = data["table"]["rows"]
    return {
        "exit": 0,
        "pairing": data["method"]["pairing"],
        "fdr": data["method"]["fdr"],
        "tested": data["counts"]["tested"],
        "flagged": data["counts"]["flagged"],
        "warnings": [w["code"] for w in data["warnings"]],
        "flagged_keys": [
            {k: r[k] for k in ("key", "change_pct", "ci_low_pct", "ci_high_pct", "q_value")}
            for r in rows
            if r.get("flagged")
        ],
        "unflagged_ci_contains_zero": sum(
            1
            for r in rows
            if not r.get("flagged")
            and r.get("ci_low_ns") is not None
            and r["ci_low_ns"] <= 0 <= r["ci_high_ns"]
        ),
        "unflagged_with_ci": sum(1 for r in rows if not r.get("flagged") and r.get("ci_low_ns") is not None),
    }


def _keep(out: Path, root: Path, tool: str, inv: str, cases: list[str]) -> None:
    from gpuopt.evaluation.capture import refs

    folder = out / "captures" / tool
    folder.mkdir(parents=True, exist_ok=True)
    suffix = ".sqlite" if tool == "nsys" else ".json"
    for variant in VARIANTS:
        for case in cases:
            for found in refs.resolve(f"cap:{inv}/{variant}/{case}", root):
                dest = folder / f"{variant}_{case}_{found.repeat + 1}{suffix}.gz"
                with found.path.open("rb") as src, gzip.open(dest, "wb", compresslevel=9) as dst:
                    shutil.copyfileobj(src, dst)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--nsys", help="nsys executable (default: found like gpuopt doctor finds it)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cases", default="rows256", help="Comma-separated example cases to capture")
    parser.add_argument("--tools", default=",".join(TOOLS), help="Comma-separated profilers (nsys,torch)")
    args = parser.parse_args()
    out: Path = args.out.resolve()
    (out / "diffs").mkdir(parents=True, exist_ok=True)
    runner, directory = _target(out)
    root = directory / "root"
    cases: list[str] = args.cases.split(",")
    summary: dict[str, Any] = {"repeats": args.repeats, "cases": cases, "invocations": {}, "diffs": {}}
    for tool in args.tools.split(","):
        inv = _capture(out, runner, tool, args.repeats, args.nsys, cases)
        summary["invocations"][tool] = inv
        _keep(out, root, tool, inv, cases)
        for case in cases:
            ref = f"cap:{inv}/{{}}/{case}"
            d = summary["diffs"]
            d[f"{tool}_{case}_ab"] = _diff(
                out, root, f"{tool}_{case}_ab", [ref.format("original")], [ref.format("candidate")]
            )
            d[f"{tool}_{case}_aa"] = _diff(
                out, root, f"{tool}_{case}_aa", [ref.format("original")], [ref.format("champion")]
            )
        one = out / "captures" / tool
        suffix = ".sqlite" if tool == "nsys" else ".json"
        single = []
        for variant in ("original", "candidate"):
            gz = one / f"{variant}_{cases[0]}_1{suffix}.gz"
            plain = out / "diffs" / f"single_{tool}_{variant}{suffix}"
            with gzip.open(gz, "rb") as src, plain.open("wb") as dst:
                shutil.copyfileobj(src, dst)
            single.append(str(plain))
        summary["diffs"][f"{tool}_{cases[0]}_single"] = _diff(
            out, root, f"{tool}_{cases[0]}_single", single[:1], single[1:]
        )
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
