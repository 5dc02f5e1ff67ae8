"""Reading ``.ncu-rep`` files: NVIDIA's ``ncu_report`` module (the ``[ncu]`` extra), else ``ncu --import``.

Compressed reports (``.ncu-repz``, ncu 2026.3's default output) are read by the same two readers, which
NVIDIA documents as reading them (``ncu_report.load_report``: "the ``.ncu-rep`` or ``.ncu-repz`` report
file"); their container is not documented, so the native framing check does not open them: an empty
file is an error here, and a file either reader cannot load (or loads with 0 ranges) is exit 2.

The native framing check runs first, so a garbage or empty file is a typed error before either reader
sees it (``ncu_report`` itself loads garbage without complaint and reports 0 ranges). The ``ncu_report``
reader then hands every metric cell to the native engine as columns; the launch count must equal the
number of results the file's framing declares.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuopt import _native
from gpuopt.errors import FormatError, InputError, ToolAbsentError

OPCODE_MIX = "sass__inst_executed_per_opcode"
# ncu's rule message types and speedup types, as its CSV pages print them.
_RULE_TYPES = {1: "INF", 2: "OPT", 3: "WRN", 4: "ERR"}
_SPEEDUP_TYPES = {1: "local", 2: "global"}
_IMPORT_TIMEOUT_S = 600


COMPRESSED_SUFFIX = ".ncu-repz"


def is_compressed(path: Path) -> bool:
    """A compressed report: named ``.ncu-repz``, or starting with the zstd frame magic."""
    if path.suffix == COMPRESSED_SUFFIX:
        return True
    from gpuopt._files import read_head

    try:
        return read_head(path, 4) == b"\x28\xb5\x2f\xfd"
    except InputError:
        return False


def framing(path: Path) -> dict[str, Any] | None:
    """The native framing check: raises FormatError / InputError for garbage, empty or truncated files.

    None for a compressed report (its container is not documented): only emptiness is checked."""
    if is_compressed(path):
        try:
            empty = path.stat().st_size == 0
        except OSError as exc:
            raise InputError("file_unreadable", f"{path}: {exc.strerror}", path=str(path)) from None
        if empty:
            raise InputError("ncu_report_empty", f"{path}: the .ncu-repz file is empty", path=str(path))
        return None
    parsed: dict[str, Any] = json.loads(_native.ncu_rep_framing_json(str(path)))
    return parsed


def ncu_report_version() -> str | None:
    """The installed ``ncu-report`` package version, or None when it is not importable."""
    try:
        import ncu_report  # noqa: F401
    except ImportError:
        return None
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ncu-report")
    except PackageNotFoundError:
        return "unknown"


class _Cells:
    """Metric cells as parallel columns for the native engine."""

    def __init__(self) -> None:
        self.launch: list[int] = []
        self.name: list[str] = []
        self.unit: list[str] = []
        self.kind: list[int] = []
        self.number: list[float] = []
        self.text: list[str] = []

    def add(self, launch: int, name: str, unit: str, value: object) -> None:
        self.launch.append(launch)
        self.name.append(name)
        self.unit.append(unit)
        if value is None:
            self.kind.append(0)
            self.number.append(math.nan)
            self.text.append("")
        elif isinstance(value, str):
            self.kind.append(2)
            self.number.append(math.nan)
            self.text.append(value)
        else:
            self.kind.append(1)
            self.number.append(float(value))  # type: ignore[arg-type]
            self.text.append("")


def _metric_value(metric: Any) -> object:
    if not metric.has_value():
        return None
    value = metric.value()
    if isinstance(value, (str, int, float)):
        return value
    return None


def _rules(action: Any, launch: int, skipped: list[int]) -> list[dict[str, Any]]:
    out = []
    for rule in action.rule_results_as_dicts():
        message = rule.get("rule_message") or {}
        kind = _RULE_TYPES.get(int(message.get("type", 0)))
        if kind is None:  # ncu's CSV pages omit message-less results too
            skipped[0] += 1
            continue
        speedup = rule.get("speedup_estimation") or {}
        out.append(
            {
                "launch": launch,
                "section": rule.get("section_identifier", ""),
                "rule": rule.get("rule_identifier", ""),
                "rule_type": kind,
                "title": message.get("title") or None,
                "message": message.get("message", ""),
                "speedup_type": _SPEEDUP_TYPES.get(int(speedup.get("type", 0))),
                "estimated_speedup_pct": speedup.get("speedup"),
            }
        )
    return out


def _action(
    ncu_report: Any,
    action: Any,
    launch: int,
    cells: _Cells,
    extras: dict[str, Any],
    instanced: dict[str, int],
) -> None:
    base = ncu_report.IAction
    extras["launches"].append(
        {
            "id": launch,
            "kernel_name": action.name(),
            "kernel_demangled": action.name(base.NameBase_DEMANGLED),
            "kernel_function": action.name(base.NameBase_FUNCTION),
            "kernel_mangled": action.name(base.NameBase_MANGLED),
        }
    )
    for name in action.metric_names():
        metric = action.metric_by_name(name)
        cells.add(launch, name, metric.unit(), _metric_value(metric))
        count = metric.num_instances()
        if count and name == OPCODE_MIX and metric.has_correlation_ids():
            ids = metric.correlation_ids()
            for i in range(count):
                extras["opcodes"].append(
                    {"launch": launch, "opcode": ids.as_string(i), "executed": metric.as_double(i)}
                )
        elif count:
            instanced[name] = instanced.get(name, 0) + 1
    for section in action.sections():
        extras["sections"].append(
            {
                "launch": launch,
                "identifier": section.identifier(),
                "name": section.name(),
                "metrics": len(section.header_metrics()) + len(section.body_metrics()),
            }
        )


def read_with_ncu_report(path: Path) -> _native.NcuReport:
    """Reads every action of every range through ``ncu_report``; the native engine builds the report."""
    import ncu_report

    framed = framing(path)
    expected = (
        f"{framed['results']} results, as the file's framing declares" if framed else "at least 1 range"
    )
    try:
        context = ncu_report.load_report(str(path))
    except (OSError, RuntimeError) as exc:
        raise FormatError(
            "format_invalid", f"ncu_report could not load {path}: {exc}", path=str(path)
        ) from None
    if context.num_ranges() == 0:
        raise InputError(
            "ncu_report_empty",
            f"ncu_report loaded {path} but found 0 ranges (garbage or an empty report)",
            path=str(path),
            expected=expected,
        )
    cells = _Cells()
    extras: dict[str, Any] = {"launches": [], "rules": [], "sections": [], "opcodes": [], "unmodeled": []}
    instanced: dict[str, int] = {}
    skipped = [0]
    launch = 0
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            _action(ncu_report, action, launch, cells, extras, instanced)
            extras["rules"].extend(_rules(action, launch, skipped))
            launch += 1
    extras["unmodeled"] = [
        {"kind": "metric_instances", "name": name, "count": count}
        for name, count in sorted(instanced.items())
    ]
    if skipped[0]:
        extras["unmodeled"].append(
            {"kind": "rule_result", "name": "rule result without a message", "count": skipped[0]}
        )
    return _native.ncu_from_columns(
        str(path),
        json.dumps(extras).encode(),
        cells.launch,
        cells.name,
        cells.unit,
        cells.kind,
        cells.number,
        cells.text,
    )


def import_commands(ncu: str, path: Path, out_dir: Path) -> list[tuple[list[str], Path]]:
    """The ``ncu --import`` commands (argv, output file) exporting a report's raw, details, session pages."""
    pages = (
        ("raw", ["--page", "raw", "--print-units", "base"]),
        ("details", ["--page", "details", "--print-units", "base"]),
        ("session", ["--page", "session"]),
    )
    return [
        ([ncu, "--import", str(path), "--csv", *args], out_dir / f"{path.stem}.{page}.csv")
        for page, args in pages
    ]


def read_with_ncu_cli(path: Path, ncu: str) -> _native.NcuReport:
    """Exports the report's pages with ``ncu --import`` and reads them natively."""
    framing(path)
    with tempfile.TemporaryDirectory(prefix="gpuopt-ncu-") as tmp:
        outputs = []
        for argv, out in import_commands(ncu, path, Path(tmp)):
            with out.open("wb") as sink:
                done = subprocess.run(
                    argv, stdout=sink, stderr=subprocess.PIPE, timeout=_IMPORT_TIMEOUT_S, check=False
                )
            if done.returncode != 0:
                detail = (done.stderr or b"").decode(errors="replace").strip()[:500]
                raise InputError(
                    "ncu_import_failed",
                    f"{' '.join(argv)} exited {done.returncode}: {detail}",
                    path=str(path),
                )
            outputs.append(out)
        raw, details, session = outputs
        return _native.ncu_open_csv(str(raw), session=str(session), details=str(details))


def absent_error(path: Path) -> ToolAbsentError:
    return ToolAbsentError(
        "tool_absent",
        f"reading {path} needs NVIDIA's ncu_report module or the ncu command, and neither was found",
        path=str(path),
        expected="pip install ncu-report (NVIDIA's reader; the extra gpuopt[ncu] installs it)"
        " or Nsight Compute with ncu on PATH",
    )


# Reports read in this process, by the file's identity as the filesystem states it: a long-lived process
# (the MCP server, a notebook) that asks several questions of one report reads it once. A file whose
# device, inode, size, mtime or ctime differ is read again, and one that changed while it was read is
# not kept.
_READ: OrderedDict[tuple[object, ...], _native.NcuReport] = OrderedDict()
_READ_KEEP = 4


def _signature(path: Path, reader: str) -> tuple[object, ...]:
    st = os.stat(path)
    return (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, reader)


def read_once(path: Path, reader: str, read: Callable[[], _native.NcuReport]) -> _native.NcuReport:
    """``read()``'s report, or the one read before in this process from the same unchanged file."""
    key = _signature(path, reader)
    if key in _READ:
        _READ.move_to_end(key)
        return _READ[key]
    native = read()
    if _signature(path, reader) == key:
        _READ[key] = native
        while len(_READ) > _READ_KEEP:
            _READ.popitem(last=False)
    return native
