"""Identities the evaluation core freezes and re-checks: the observed runtime (gpuopt's own observation,
the doctor identity), the tool identity of gpuopt itself, and the cross-check against what a driver reports.
"""

from __future__ import annotations

import hashlib
import platform
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpuopt.errors import AbsentError, InputError, ToolAbsentError
from gpuopt.evaluation import formats, jsonio
from gpuopt.models.evaluation.driver import ReportedRuntime
from gpuopt.models.evaluation.invocation import ToolIdentity
from gpuopt.models.evaluation.target import (
    AttributionScope,
    ObservedGpu,
    ObservedHost,
    ObservedNative,
    ObservedNvidia,
    ObservedRuntime,
    ObservedTool,
)


def observe(gpus: list[str], required_tools: list[str]) -> ObservedRuntime:
    """Observes this host, the Target's GPUs (all must be present: ``gpu_not_found``, exit 3) and the
    required tools (``tool_absent``, exit 3)."""
    from gpuopt import __version__, host, tools
    from gpuopt import gpus as gpu_facts
    from gpuopt.provenance import native_build

    nvidia, note = gpu_facts.observe()
    by_uuid = {g.uuid: g for g in (nvidia.gpus if nvidia else [])}
    observed_gpus = []
    for uuid in gpus:
        found = by_uuid.get(uuid)
        if found is None:
            raise AbsentError(
                "gpu_not_found",
                f"the Target GPU {uuid} is not visible on this host" + (f" ({note})" if note else ""),
                path="gpus",
                expected=uuid,
                observed=", ".join(sorted(by_uuid)) or "no GPU",
            )
        observed_gpus.append(ObservedGpu.model_validate(found.model_dump()))
    found_tools = []
    for name in required_tools:
        tool = tools.find_tool(name)
        if tool is None:
            raise ToolAbsentError("tool_absent", f"the required tool {name!r} was not found", expected=name)
        found_tools.append(ObservedTool(name=name, path=tool.path, version=tool.version, sha256=tool.sha256))
    return ObservedRuntime(
        host=ObservedHost.model_validate(host.host_identity().model_dump()),
        nvidia=None
        if nvidia is None
        else ObservedNvidia(
            source=nvidia.source,
            driver_version=nvidia.driver_version,
            cuda_driver_version=nvidia.cuda_driver_version,
        ),
        gpus=observed_gpus,
        python_version=platform.python_version(),
        python_executable=sys.executable,
        gpuopt_version=__version__,
        native=ObservedNative.model_validate(native_build().model_dump()),
        required_tools=found_tools,
    )


def stable_view(observed: ObservedRuntime) -> dict[str, Any]:
    """The observed facts that must not change under a Target: host, driver, CUDA, the GPUs' identity."""
    return {
        "host_id": observed.host.host_id,
        "nvidia": None if observed.nvidia is None else observed.nvidia.model_dump(exclude={"source"}),
        "gpus": [g.model_dump() for g in observed.gpus],
        "required_tools": [t.model_dump() for t in observed.required_tools],
    }


def check_unchanged(frozen: ObservedRuntime, now: ObservedRuntime) -> None:
    """``identity_changed`` when a stable observed fact differs from the frozen one."""
    then_view, now_view = stable_view(frozen), stable_view(now)
    for key in then_view:
        if jsonio.canonical(then_view[key]) != jsonio.canonical(now_view[key]):
            raise InputError(
                "identity_changed",
                f"the observed runtime changed since the Target was frozen: {key}",
                path=f"runtime_identity.observed.{key}",
                expected=jsonio.canonical(then_view[key]).decode()[:1000],
                observed=jsonio.canonical(now_view[key]).decode()[:1000],
            )


def cross_check(
    observed: ObservedRuntime, reported: ReportedRuntime, gpus: list[str]
) -> tuple[AttributionScope, list[str]]:
    """Readiness cross-check: reported GPUs = Target GPUs = observed, same driver version and GPU names.
    Returns the attribution scope and notes; a mismatch is ``identity_mismatch``."""

    def mismatch(path: str, expected: Any, seen: Any) -> InputError:
        return InputError(
            "identity_mismatch",
            f"the driver reports a runtime that differs from gpuopt's observation at {path}",
            path=path,
            expected=jsonio.canonical(expected).decode(),
            observed=jsonio.canonical(seen).decode(),
        )

    observed_uuids = sorted(g.uuid for g in observed.gpus)
    if sorted(reported.gpu_uuids) != sorted(gpus) or observed_uuids != sorted(gpus):
        raise mismatch("runtime_identity.reported.gpu_uuids", sorted(gpus), sorted(reported.gpu_uuids))
    names = {g.uuid: g.name for g in observed.gpus}
    expected_names = [names[u] for u in reported.gpu_uuids]
    if reported.gpu_names != expected_names:
        raise mismatch("runtime_identity.reported.gpu_names", expected_names, reported.gpu_names)
    observed_driver = None if observed.nvidia is None else observed.nvidia.driver_version
    if gpus and reported.driver_version != observed_driver:
        raise mismatch("runtime_identity.reported.driver_version", observed_driver, reported.driver_version)
    notes = []
    in_container = bool(observed.host.container_hints)
    prov = reported.provenance
    scope: AttributionScope = "identified_runtime"
    if prov.kind == "host" and not prov.lineage_complete:
        notes.append("the driver reports a host runtime without lineage_complete: true")
        scope = "frozen_runtime_only"
    if (prov.kind == "container") != in_container:
        notes.append(
            f"the driver reports a {prov.kind} runtime but gpuopt observed "
            + (
                f"container hints ({', '.join(observed.host.container_hints)})"
                if in_container
                else "no container hints"
            )
        )
        scope = "frozen_runtime_only"
    if prov.kind == "container":
        bases = [layer for layer in prov.lineage if layer.kind == "base"]
        if not prov.lineage_complete or len(bases) != 1:
            notes.append("the container lineage is incomplete: claims attach only to this exact runtime")
            scope = "frozen_runtime_only"
    if not gpus and reported.driver_version is not None and observed_driver is None:
        notes.append(f"the driver reports NVIDIA driver {reported.driver_version}; gpuopt observed none")
    return scope, notes


def _implementation_files() -> list[Path]:
    here = Path(__file__).resolve().parent
    models = here.parent / "models" / "evaluation"
    packages = [
        here / "analysis",
        here / "readiness",
        here / "gate",
    ]  # views/ stay out: they do not affect measurement
    return sorted([*here.glob("*.py"), *(f for p in packages for f in p.glob("*.py")), *models.glob("*.py")])


@lru_cache(maxsize=1)
def tool_identity() -> ToolIdentity:
    """gpuopt's own identity for an invocation: versions and the hash of the modules that affect
    measurement (re-checked at supervisor start and before publication: ``tool_identity_changed``)."""
    return _tool_identity_now()


def _tool_identity_now() -> ToolIdentity:
    from gpuopt import __version__
    from gpuopt.provenance import native_build

    h = hashlib.sha256()
    base = Path(__file__).resolve().parent.parent
    for path in _implementation_files():
        h.update(str(path.relative_to(base)).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return ToolIdentity(
        gpuopt_version=__version__,
        native_build_id=native_build().build_id,
        evaluation_format=formats.EVALUATION,
        implementation_sha256=h.hexdigest(),
    )


def current_tool_identity() -> ToolIdentity:
    """Recomputed from the installed files now (not cached)."""
    return _tool_identity_now()
