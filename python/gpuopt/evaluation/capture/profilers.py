"""The profilers a capture runs the driver under: finding one (request option, ``$GPUOPT_NSYS`` /
``$GPUOPT_NCU``, then the search of :mod:`gpuopt.tools`), the exact argv (``{out}`` stands for the call's
report path) and, after the call, the report it wrote or the typed reason it wrote none.

nsys: ``nsys profile`` wraps the driver command; its report is exported with ``nsys export --type sqlite``.
ncu: the argv of ``gpuopt ncu collect`` (``--clock-control none`` unless asked). torch: no wrapper; the driver
writes a Kineto trace of its measured region to ``$GPUOPT_TORCH_TRACE``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from gpuopt import tools
from gpuopt._ncu import collect as ncu_collect
from gpuopt.errors import InputError, ToolAbsentError
from gpuopt.models.evaluation.capture import (
    CaptureRequest,
    CaptureTool,
    NcuOptions,
    NsysOptions,
    ProfilerIdentity,
)

ENV_PROFILER = {"nsys": "GPUOPT_NSYS", "ncu": "GPUOPT_NCU"}
TORCH_TRACE_ENV = "GPUOPT_TORCH_TRACE"
OUT = "{out}"
"""Placeholder in a frozen argv for the call's report path (without suffix)."""
REPORT_STEM = "capture"
EXPORT_TIMEOUT_S = 600.0
PERMISSION_MARK = "ERR_NVGPUCTRPERM"
INSTALL = {
    "nsys": "NVIDIA Nsight Systems (nsys on PATH, or $GPUOPT_NSYS / the request's profiler naming it)",
    "ncu": "NVIDIA Nsight Compute (ncu on PATH, or $GPUOPT_NCU / the request's profiler naming it)",
}


def find(tool: CaptureTool, given: str | None, cwd: Path) -> ProfilerIdentity | None:
    """The profiler's identity (path, version, sha256); None for torch. Absent: exit 3 naming what to
    install."""
    if tool == "torch":
        return None
    named = given or os.environ.get(ENV_PROFILER[tool])
    if named:
        path = cwd / named
        if not path.is_file() or not os.access(path, os.X_OK):
            raise ToolAbsentError(
                "tool_absent",
                f"the {tool} named by "
                + ("the request's profiler" if given else f"${ENV_PROFILER[tool]}")
                + f" is not an executable file: {named}",
                path="profiler",
                expected=INSTALL[tool],
                observed=named,
            )
        found = tools.identify(tool, path, "request" if given else ENV_PROFILER[tool])
    else:
        maybe = tools.find_tool(tool)
        if maybe is None:
            raise ToolAbsentError(
                "tool_absent",
                f"gpuopt capture with tool {tool} needs {tool}; it was not found on PATH or in the standard "
                "install folders",
                path="tool",
                expected=INSTALL[tool],
            )
        found = maybe
    return ProfilerIdentity(name=tool, path=found.path, version=found.version, sha256=found.sha256)


def nsys_options(o: NsysOptions) -> dict[str, str]:
    if (o.capture_range == "nvtx") != (o.nvtx_capture is not None):
        raise InputError(
            "field_invalid",
            "nsys.nvtx_capture names the range exactly when nsys.capture_range is nvtx",
            path="nsys.nvtx_capture",
            expected="capture_range nvtx with nvtx_capture, or neither",
            observed=f"capture_range {o.capture_range}, nvtx_capture {o.nvtx_capture}",
        )
    out = {
        "trace": ",".join(o.trace),
        "capture-range": o.capture_range,
        "cuda-graph-trace": o.cuda_graph_trace,
        "sample": o.sample,
        "cpuctxsw": "none" if o.sample == "none" else o.sample,
    }
    if o.nvtx_capture is not None:
        out["nvtx-capture"] = o.nvtx_capture
    return out


def _nsys_argv(path: str, options: dict[str, str]) -> list[str]:
    argv = [path, "profile", f"--output={OUT}", "--force-overwrite=true", "--export=none"]
    for name, value in options.items():
        argv.append(f"--{name}={value}")
    if options.get("capture-range") in ("cudaProfilerApi", "nvtx"):
        argv.append("--capture-range-end=stop")
    return [*argv, "--"]


def _ncu_options(o: NcuOptions) -> ncu_collect.CollectOptions:
    return ncu_collect.CollectOptions(
        kernel=o.kernel,
        launch_skip=o.launch_skip,
        launch_count=o.launch_count,
        set_name=o.set_name,
        sections=tuple(o.sections),
        nvtx_include=tuple(o.nvtx_include),
        clock_control=o.clock_control,
    )


def ncu_options(o: NcuOptions) -> dict[str, str]:
    out = {"clock-control": o.clock_control, "target-processes": "all"}
    for name, value in (
        ("kernel-name", None if o.kernel is None else f"regex:{o.kernel}"),
        ("launch-skip", o.launch_skip),
        ("launch-count", o.launch_count),
        ("set", o.set_name),
        ("section", ",".join(o.sections) or None),
        ("nvtx-include", ",".join(o.nvtx_include) or None),
    ):
        if value is not None:
            out[name] = str(value)
    return out


def settings(req: CaptureRequest, profiler: ProfilerIdentity | None) -> tuple[dict[str, str], list[str]]:
    """The recorded options and the profiler argv (before the driver's) of a request."""
    if req.tool == "nsys" and profiler is not None:
        options = nsys_options(req.nsys)
        return options, _nsys_argv(profiler.path, options)
    if req.tool == "ncu" and profiler is not None:
        argv = ncu_collect.build_command(profiler.path, Path(OUT).parent, ["--"], _ncu_options(req.ncu))
        # build_command ends with --export <dir>/report then the command; the report goes to {out}.
        argv = argv[:-1]
        argv[argv.index("--export") + 1] = OUT
        return ncu_options(req.ncu), argv
    return {"trace_env": TORCH_TRACE_ENV}, []


def wrap(argv: list[str], out: Path) -> list[str]:
    return [a.replace(OUT, str(out)) for a in argv]


def report_path(tool: CaptureTool, out: Path) -> Path | None:
    """The report the profiler wrote for ``out`` (nsys appends .nsys-rep, ncu .ncu-rep or .ncu-repz);
    None when there is none."""
    suffixes = {"nsys": (".nsys-rep",), "ncu": ncu_collect.REPORT_SUFFIXES, "torch": ("",)}[tool]
    for suffix in suffixes:
        candidate = out.with_name(out.name + suffix)
        if candidate.is_file():
            return candidate
    return None


def export_sqlite(nsys: str, report: Path) -> Path:
    """``nsys export --type sqlite``: the export beside the report (``nsys_export_failed`` otherwise)."""
    out = report.with_suffix(".sqlite")
    argv = [nsys, "export", "--type=sqlite", f"--output={out}", "--force-overwrite=true", str(report)]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, errors="replace", timeout=EXPORT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError("nsys_export_failed", f"nsys export did not run: {exc}", path=str(report)) from None
    if done.returncode != 0 or not out.is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
        raise InputError(
            "nsys_export_failed",
            f"nsys export exited {done.returncode} without a SQLite export: {tail[0][:500]}",
            path=str(report),
        )
    return out


def failure(tool: CaptureTool, logs: str, returncode: int | None) -> tuple[str, str]:
    """Why a profiled call wrote no report: (reason code, message)."""
    if tool == "ncu" and PERMISSION_MARK in logs:
        line = next((x.strip() for x in logs.splitlines() if PERMISSION_MARK in x), PERMISSION_MARK)
        return "ncu_counter_access_denied", f"{ncu_collect.PERMISSION_HELP} ({line})"[:4000]
    if tool == "torch":
        return (
            "torch_trace_missing",
            f"the driver wrote no Kineto trace at ${TORCH_TRACE_ENV} (exit {returncode})",
        )
    return "profiler_no_report", f"{tool} exited {returncode} without writing a report"
