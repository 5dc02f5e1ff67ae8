"""Makes the H200 captures of issue 15 (GPU machine only): the example's torch softmax, original and the
faster candidate, 5 captures each under nsys and under torch.profiler, interleaved (o, f, o, f, ...), and
an A/A set (5 more captures of the original), into ``tests/data/profiles/h200/`` (layout in its README).

    python benchmarks/profile_captures.py capture [--repeats 5] [--out tests/data/profiles/h200]
    python benchmarks/profile_captures.py workload --variant original [--torch-trace T.json]  # one capture

The workload imports ``softmax.py`` of a variant from ``gpuopt/example/project/torch``, builds the case
``rows256`` (256 x 4096 float32, seed 0) on the GPU, warms up 3 times, then runs 20 iterations, each in
an NVTX range ``iteration`` (the marker: ``gpuopt profile diff --marker iteration``). Under nsys:
``nsys profile --trace=cuda,nvtx --sample=none --cpuctxsw=none``, exported to SQLite. Under torch: the
iterations inside ``torch.profiler.profile(activities=[CPU, CUDA])``, written as a Kineto JSON trace.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "python" / "gpuopt" / "example" / "project" / "torch"
VARIANTS = {"original": PROJECT / "original", "faster": PROJECT / "candidates" / "faster"}
ITERATIONS = 20


def workload(variant: str, torch_trace: Path | None) -> None:
    import torch

    spec = importlib.util.spec_from_file_location("softmax", VARIANTS[variant] / "softmax.py")
    if spec is None or spec.loader is None:
        sys.exit(f"no softmax.py for {variant}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    generator = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(256, 4096, generator=generator, device="cuda", dtype=torch.float32)
    for _ in range(3):
        module.run(x)
    torch.cuda.synchronize()

    def iterations() -> None:
        for _ in range(ITERATIONS):
            torch.cuda.nvtx.range_push("iteration")
            with torch.profiler.record_function("iteration"):
                module.run(x)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()

    if torch_trace is None:
        iterations()
        return
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as prof:
        iterations()
    prof.export_chrome_trace(str(torch_trace))


def capture(out: Path, repeats: int) -> None:
    nsys = shutil.which("nsys")
    if nsys is None:
        sys.exit("nsys is not on PATH")
    me = [sys.executable, str(Path(__file__).resolve()), "workload"]
    for i in range(1, repeats + 1):
        for variant, folder in (("original", "original"), ("faster", "faster"), ("original", "original_aa")):
            for kind in ("nsys", "torch"):
                target = out / kind / folder
                target.mkdir(parents=True, exist_ok=True)
                if kind == "torch":
                    trace = target / f"capture_{i}.json"
                    subprocess.run([*me, "--variant", variant, "--torch-trace", str(trace)], check=True)
                    subprocess.run(["gzip", "-f", str(trace)], check=True)
                    continue
                rep = target / f"capture_{i}"
                subprocess.run(
                    [
                        nsys,
                        "profile",
                        "--trace=cuda,nvtx",
                        "--sample=none",
                        "--cpuctxsw=none",
                        "--force-overwrite=true",
                        "-o",
                        str(rep),
                        *me,
                        "--variant",
                        variant,
                    ],
                    check=True,
                )
                subprocess.run(
                    [
                        nsys,
                        "export",
                        "--type",
                        "sqlite",
                        "--force-overwrite",
                        "true",
                        "--output",
                        str(rep.with_suffix(".sqlite")),
                        str(rep.with_suffix(".nsys-rep")),
                    ],
                    check=True,
                )
                rep.with_suffix(".nsys-rep").unlink()
    print(
        f"captures in {out}; check: gpuopt profile diff --baseline {out}/nsys/original/capture_1.sqlite ..."
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("workload")
    w.add_argument("--variant", choices=sorted(VARIANTS), required=True)
    w.add_argument("--torch-trace", type=Path)
    c = sub.add_parser("capture")
    c.add_argument("--repeats", type=int, default=5)
    c.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "profiles" / "h200")
    args = parser.parse_args()
    if args.command == "workload":
        workload(args.variant, args.torch_trace)
    else:
        capture(args.out, args.repeats)


if __name__ == "__main__":
    main()
