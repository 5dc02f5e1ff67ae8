"""``gpuopt ncu collect``: run Nsight Compute on a command and keep the report with its provenance.

The ncu command is built as an argument list and run without a shell, with ``--clock-control none`` by
default (ncu's own default locks clocks to base during replay). Beside the report go the exact command
line, the ncu identity and the GPU identity (``gpuopt-collect.json``) and ncu's stdout/stderr. Counter
access denied (``ERR_NVGPUCTRPERM``) is a typed error naming the host change an administrator could make;
gpuopt never makes it.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpuopt.errors import AbsentError, InputError
from gpuopt.models.ncu import NcuCollection, WrittenFile

REPORT_STEM = "report"
RECORD_NAME = "gpuopt-collect.json"
CLOCK_CONTROLS = ("none", "base")
_PERMISSION_MARK = "ERR_NVGPUCTRPERM"
_NO_KERNELS_MARK = "No kernels were profiled"
PERMISSION_HELP = (
    "ncu could not read the GPU's performance counters (ERR_NVGPUCTRPERM): this user lacks permission. "
    "gpuopt changes nothing on the host. An administrator can allow it by running ncu as root, or by "
    "setting the driver option NVreg_RestrictProfilingToAdminUsers=0 (e.g. `options nvidia "
    '"NVreg_RestrictProfilingToAdminUsers=0"` in /etc/modprobe.d, then reloading the driver or rebooting); '
    "inside a container the profiling process also needs CAP_SYS_ADMIN. See "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM."
)


@dataclass(frozen=True)
class CollectOptions:
    """What to profile and how; every field maps to one ncu option."""

    kernel: str | None = None
    launch_skip: int | None = None
    launch_count: int | None = None
    set_name: str | None = None
    sections: Sequence[str] = field(default_factory=tuple)
    nvtx_include: Sequence[str] = field(default_factory=tuple)
    clock_control: str = "none"
    target_processes: str = "all"


def build_command(ncu: str, out_dir: Path, command: Sequence[str], options: CollectOptions) -> list[str]:
    """The exact ncu argv: options, ``--export DIR/report``, then the profiled command."""
    if not command:
        raise InputError("usage_invalid", "no command to profile: give it after --")
    if options.set_name is not None and options.sections:
        raise InputError("usage_invalid", "--set and --section exclude each other")
    if options.clock_control not in CLOCK_CONTROLS:
        raise InputError(
            "usage_invalid",
            f"--clock-control must be one of {', '.join(CLOCK_CONTROLS)}",
            observed=options.clock_control,
        )
    argv = [ncu, "--clock-control", options.clock_control, "--target-processes", options.target_processes]
    if options.kernel is not None:
        argv += ["--kernel-name", f"regex:{options.kernel}"]
    if options.launch_skip is not None:
        argv += ["--launch-skip", str(options.launch_skip)]
    if options.launch_count is not None:
        argv += ["--launch-count", str(options.launch_count)]
    if options.set_name is not None:
        argv += ["--set", options.set_name]
    for section in options.sections:
        argv += ["--section", section]
    if options.nvtx_include:
        argv.append("--nvtx")
        for rng in options.nvtx_include:
            argv += ["--nvtx-include", rng]
    argv += ["--export", str(out_dir / REPORT_STEM)]
    return [*argv, *command]


def _check_command(command: Sequence[str]) -> None:
    program = command[0] if command else ""
    if program and shutil.which(program) is None and not Path(program).is_file():
        raise InputError(
            "command_not_found",
            f"the command to profile was not found: {program}",
            expected="an executable on PATH or a path to one",
            observed=program,
        )


#: What ncu writes for ``--export DIR/report``: ``.ncu-rep``, or ``.ncu-repz`` (the compressed report,
#: ncu 2026.3's default when the name has no extension).
REPORT_SUFFIXES = (".ncu-rep", ".ncu-repz")


def _written_report(out_dir: Path) -> Path:
    """The report ncu wrote (the first suffix present), else the ``.ncu-rep`` name."""
    candidates = [out_dir / f"{REPORT_STEM}{suffix}" for suffix in REPORT_SUFFIXES]
    return next((c for c in candidates if c.is_file()), candidates[0])


def _prepare_out_dir(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    reports = [out_dir / f"{REPORT_STEM}{suffix}" for suffix in REPORT_SUFFIXES]
    for existing in (*reports, out_dir / RECORD_NAME):
        if existing.exists():
            raise InputError(
                "ncu_output_exists",
                f"{existing} already exists; gpuopt never overwrites a collection",
                path=str(existing),
                expected="an empty or new --out directory",
            )


def _identities(paths: Sequence[Path]) -> list[WrittenFile]:
    from gpuopt.provenance import file_sha256

    return [
        WrittenFile(path=str(p), size_bytes=p.stat().st_size, sha256=file_sha256(p))
        for p in paths
        if p.is_file()
    ]


def collect(
    out_dir: Path, command: Sequence[str], options: CollectOptions, *, timeout_s: float | None = None
) -> NcuCollection:
    """Runs ncu on ``command``; writes the report, logs and ``gpuopt-collect.json`` under ``out_dir``."""
    from gpuopt import gpus, tools

    ncu = tools.require_tool("ncu")
    argv = build_command(ncu.path, out_dir, command, options)
    _check_command(command)
    _prepare_out_dir(out_dir)
    stdout_path, stderr_path = out_dir / "ncu.stdout.txt", out_dir / "ncu.stderr.txt"
    gpu_identity, gpu_note = gpus.observe()
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        try:
            done = subprocess.run(argv, stdout=out, stderr=err, timeout=timeout_s, check=False)
            exit_code = done.returncode
        except subprocess.TimeoutExpired:
            exit_code = -1
    report = _written_report(out_dir)
    record = NcuCollection(
        out_dir=str(out_dir),
        report_path=str(report) if report.is_file() else None,
        argv=argv,
        command_line=shlex.join(argv),
        exit_code=exit_code,
        clock_control=options.clock_control,
        ncu=ncu,
        gpus=gpu_identity,
        gpu_note=gpu_note,
        stdout_path=str(stdout_path),
        stderr_path=str(stderr_path),
        files=_identities([report, stdout_path, stderr_path]),
    )
    (out_dir / RECORD_NAME).write_text(record.model_dump_json(indent=2) + "\n")
    _raise_on_failure(record, stdout_path, stderr_path, timeout_s)
    return record


def _raise_on_failure(
    record: NcuCollection, stdout_path: Path, stderr_path: Path, timeout_s: float | None
) -> None:
    text = stdout_path.read_text(errors="replace") + "\n" + stderr_path.read_text(errors="replace")
    if _PERMISSION_MARK in text:
        raise AbsentError(
            "ncu_counter_access_denied",
            PERMISSION_HELP,
            path=record.out_dir,
            expected="GPU performance counters readable by this user",
            observed=_first_line_with(text, _PERMISSION_MARK),
        )
    if record.exit_code == -1:
        raise InputError("ncu_timeout", f"ncu ran past --timeout {timeout_s} s", path=record.out_dir)
    if record.report_path is None:
        reason = _first_line_with(text, _NO_KERNELS_MARK) or _first_line_with(text, "==ERROR==")
        raise InputError(
            "ncu_no_report",
            f"ncu exited {record.exit_code} without writing a report"
            + (f": {reason}" if reason else f"; see {record.stderr_path}"),
            path=record.out_dir,
        )


def _first_line_with(text: str, mark: str) -> str | None:
    for line in text.splitlines():
        if mark in line:
            return line.strip()
    return None
