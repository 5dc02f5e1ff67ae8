"""Shared pieces of the capture tests: the CPU example's Target (`gpuopt example`'s numpy project, real driver
processes, real supervisors) and profiler stand-ins, small scripts named nsys or ncu that run the driver they
wrap and replay a real recorded H200 capture (``tests/data/fixtures/gpuopt/h200/softmax``: the GPU example's
softmax, original and faster candidate, five interleaved captures each) as their report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuopt.errors import GpuoptError
from gpuopt.evaluation.capture import operations
from gpuopt.example.runner import Runner

LIMITS = {"operation_timeout_s": 600, "command_timeout_s": 120, "termination_grace_s": 0.3}
PLAN = {"case_ids": ["rows512"], "samples_per_call": 2, "warmup_per_call": 0}
# The recorded capture each role replays, numbered by the role's n-th call (1..5).
REPLAY = {"original": "original_a", "reference": "original_b", "candidate": "faster"}

FAKE_NSYS = """#!{python}
# A stand-in for nsys: `profile` runs the wrapped driver, then writes the next recorded H200 capture of the
# driver's subject role as its report; `export` copies that report (a SQLite file already) to the output.
import json, os, shutil, subprocess, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA Nsight Systems version 2025.3.1.90-253135822126v0")
    sys.exit(0)
opt = {{a.split("=", 1)[0]: a.split("=", 1)[1] for a in args if a.startswith("--") and "=" in a}}
if args[0] == "export":
    shutil.copyfile(args[-1], opt["--output"])
    sys.exit(0)
mode = {mode!r}
command = args[args.index("--") + 1:]
if mode == "hang":
    import time
    open(os.path.join({state!r}, "started"), "w").close()
    time.sleep(120)
code = subprocess.call(command)
if mode == "no_report":
    print("nsys: the application exited before the capture range started", file=sys.stderr)
    sys.exit(code)
request = json.load(open(command[command.index("--request") + 1]))
role = request["subjects"][0]["role"]
counter = os.path.join({state!r}, role)
n = (int(open(counter).read()) if os.path.exists(counter) else 0) + 1
open(counter, "w").write(str(n))
name = {replay!r}[role]
shutil.copyfile(os.path.join({folder!r}, "sm_%s_%d.sqlite" % (name, n)), opt["--output"] + ".nsys-rep")
sys.exit(code)
"""

FAKE_NCU = """#!{python}
# A stand-in for ncu: prints ncu's real counter-permission error, as ncu does on a locked-down host, or
# runs the command and writes a real recorded H200 report where --export points.
import shutil, subprocess, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler")
    print("Version 2025.3.1.0 (build 36398880) (public-release)")
    sys.exit(0)
print("==PROF== Connected to process 4242")
if {report!r}:
    at = args.index("--export")
    code = subprocess.call(args[at + 2:])
    shutil.copyfile({report!r}, args[at + 1] + ".ncu-rep")
    sys.exit(code)
print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance"
      " Counters on the target device 0.")
sys.exit(1)
"""


def stand_in(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    path.chmod(0o755)
    return path


class Example:
    """The CPU example's Target, baseline and Experiments (no evaluation beyond the baseline)."""

    def __init__(self, base: Path, shared: Path) -> None:
        self.base = base
        self.shared = shared
        runner = Runner(base / "demo", gpu=False, progress=lambda _: None)
        runner.prepare()
        runner.readiness()
        runner.baseline()
        runner.experiments()
        self.dir = runner.dir
        self.root = runner.dir / "root"
        self.refs = runner.refs

    def nsys(self, tag: str, mode: str = "replay") -> Path:
        state = self.base / f"state-{tag}"
        state.mkdir()
        folder = self.shared / "gpuopt/h200/softmax/nsys"
        text = FAKE_NSYS.format(
            python=sys.executable, mode=mode, state=str(state), replay=REPLAY, folder=str(folder)
        )
        return stand_in(self.base / f"bin-{tag}", "nsys", text)

    def request(self, tool: str, variants: list[str], **over: Any) -> dict[str, Any]:
        req: dict[str, Any] = {
            "root": str(self.root),
            "tool": tool,
            "plan": {**PLAN, "variants": variants, "repeats": 5},
            "limits": LIMITS,
        }
        if "candidate" in variants:
            req["experiment"] = self.refs["experiment:faster"]
        req.update(over)
        return req


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory, shared: Path) -> Example:
    return Example(tmp_path_factory.mktemp("capture"), shared)


@pytest.fixture(scope="module")
def nsys_ab(example: Example) -> Any:
    fake = example.nsys("ab")
    req = example.request("nsys", ["original", "candidate"], profiler=str(fake))
    return operations.run(req, cwd=example.dir, wait=True)


def code(fn: Any, *args: Any, **kw: Any) -> tuple[str, int]:
    try:
        fn(*args, **kw)
    except GpuoptError as exc:
        return exc.code, exc.exit_code
    return "ok", 0


TRACING_DRIVER = """import gzip, os, runpy, shutil, sys
# A stand-in for a driver with the torch_trace capability on a machine without torch: it runs the CPU
# example's driver, then writes the next recorded H200 Kineto trace of its subject's role where gpuopt asked.
sys.argv = [os.path.join(os.path.dirname(__file__), "driver.py"), *sys.argv[1:]]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as exc:
    if exc.code:
        raise
out = os.environ.get("GPUOPT_TORCH_TRACE")
if out and not os.path.exists({forget!r}):
    import json
    request = json.load(open(sys.argv[sys.argv.index("--request") + 1]))
    role = request["subjects"][0]["role"]
    counter = os.path.join({state!r}, role)
    n = (int(open(counter).read()) if os.path.exists(counter) else 0) + 1
    open(counter, "w").write(str(n))
    name = {replay!r}[role]
    with gzip.open(os.path.join({folder!r}, "sm_%s_%d.json.gz" % (name, n))) as f, open(out, "wb") as g:
        shutil.copyfileobj(f, g)
"""


@pytest.fixture(scope="module")
def tracing(tmp_path_factory: pytest.TempPathFactory, shared: Path) -> tuple[Path, Path, Path]:
    """A CPU example Target whose driver declares torch_trace (the stand-in above); returns its folder,
    root and the file whose presence makes the driver forget the trace."""
    from gpuopt.evaluation import readiness
    from gpuopt.example.runner import readiness_request

    base = tmp_path_factory.mktemp("torch-capture")
    runner = Runner(base / "demo", gpu=False, progress=lambda _: None)
    runner.prepare()
    state, forget = base / "state", base / "forget"
    state.mkdir()
    folder = shared / "gpuopt/h200/softmax/torch"
    text = TRACING_DRIVER.format(forget=str(forget), state=str(state), replay=REPLAY, folder=str(folder))
    (runner.dir / "project/bench/tracing.py").write_text(text)
    request = readiness_request("numpy")
    request["driver"]["argv"] = [sys.executable, "project/bench/tracing.py"]
    request["driver"]["capabilities"] = ["torch_trace"]
    readiness.check(json.dumps(request).encode(), cwd=runner.dir)
    return runner.dir, runner.dir / "root", forget
