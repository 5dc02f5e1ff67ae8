"""``audit versions A B``: is the change between two identity records a single-variable stack change?

Each record is a ``gpuopt doctor --json`` output (the envelope or its data), a ``target.json`` or an
artifact root holding one. Both become two flat maps:

* **frozen**: what must not change in a stack comparison: the host, the GPUs (UUID, name, compute
  capability, MIG, persistence, power limit, application clocks), the measuring gpuopt build, and for
  Targets the workload definition (original, test set, accuracy rule, metrics, objective, statistics,
  contamination, claim layer; compared by canonical digest).
* **stack**: the components one comparison may change: NVIDIA driver, CUDA runtime, Python, the OS kernel,
  each tool (version and sha256: a version string is not a tool identity) and each package/framework.

Two records of one kind are compared on every key; a doctor record and a Target only on the keys both
carry (a doctor record has no workload definition); ``keys_compared`` and the checked lists say so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from gpuopt.errors import InputError
from gpuopt.models.doctor import DoctorReport
from gpuopt.models.evaluation.target import DiagnosticTarget, Target
from gpuopt.models.knowledge import ComponentChange, VersionAuditData

Kind = Literal["doctor", "target"]
MAX_BYTES = 16 * 1024 * 1024

REQUIREMENTS = [
    "freeze a separate Target per stack (gpuopt readiness check on each)",
    "build every compiled artefact fresh per stack: no cubin, Triton, Inductor or engine cache reused",
    "pass the correctness rule on each stack before any timing",
    "compare with paired, interleaved timing (gpuopt stats compare) and report only the versions tested",
]
_TARGET_FROZEN = (
    "claim_layer",
    "original",
    "test_set",
    "accuracy",
    "metrics",
    "objective",
    "statistics",
    "contamination",
)


def _gpu_fields(prefix: str, gpu: Any) -> dict[str, str | None]:
    clocks = gpu.clocks_applications
    return {
        f"{prefix}.name": gpu.name,
        f"{prefix}.compute_capability": gpu.compute_capability,
        f"{prefix}.mig_mode": _text(gpu.mig_mode_current),
        f"{prefix}.persistence_mode": _text(gpu.persistence_mode),
        f"{prefix}.power_limit_w": _text(gpu.power_limit_enforced_w),
        f"{prefix}.application_clocks_mhz": f"{clocks.graphics_mhz}/{clocks.sm_mhz}/{clocks.memory_mhz}",
    }


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _doctor(report: DoctorReport) -> tuple[dict[str, str | None], dict[str, str | None]]:
    frozen: dict[str, str | None] = {
        "host.host_id": report.host.host_id,
        "host.cpu_model": report.host.cpu_model,
        "gpuopt.version": report.gpuopt.version,
        "gpuopt.native_build": report.gpuopt.native.build_id,
    }
    stack: dict[str, str | None] = {
        "python": report.python.version,
        "os.kernel": report.host.kernel,
    }
    if report.nvidia is not None:
        stack["nvidia.driver"] = report.nvidia.driver_version
        for gpu in report.nvidia.gpus:
            frozen.update(_gpu_fields(f"gpu.{gpu.uuid}", gpu))
    for tool in report.tools:
        stack[f"tool.{tool.name}"] = f"{tool.version} sha256:{tool.sha256[:16]}"
    for package in report.packages:
        suffix = f" (cuda {package.cuda_version})" if package.cuda_version else ""
        stack[f"package.{package.name}"] = f"{package.version}{suffix}"
    return frozen, stack


def _digest(value: Any) -> str:
    from gpuopt.evaluation import jsonio

    return jsonio.digest(value)


def _target(target: Target | DiagnosticTarget) -> tuple[dict[str, str | None], dict[str, str | None]]:
    observed = target.runtime_identity.observed
    frozen: dict[str, str | None] = {
        "host.host_id": observed.host.host_id,
        "host.cpu_model": observed.host.cpu_model,
        "gpuopt.version": observed.gpuopt_version,
        "gpuopt.native_build": observed.native.build_id,
    }
    for gpu in observed.gpus:
        frozen.update(_gpu_fields(f"gpu.{gpu.uuid}", gpu))
    dumped = target.model_dump(mode="json")
    for name in _TARGET_FROZEN:
        frozen[f"target.{name}"] = _digest(dumped[name])
    stack: dict[str, str | None] = {
        "python": observed.python_version,
        "os.kernel": observed.host.kernel,
        "nvidia.driver": None if observed.nvidia is None else observed.nvidia.driver_version,
    }
    for tool in observed.required_tools:
        stack[f"tool.{tool.name}"] = f"{tool.version} sha256:{tool.sha256[:16]}"
    if isinstance(target, Target):
        reported = target.runtime_identity.reported
        stack["cuda.runtime"] = reported.cuda_runtime_version
        for name, version in reported.frameworks.items():
            stack[f"package.{name}"] = version
    return frozen, stack


def read_record(path: Path) -> tuple[Kind, dict[str, str | None], dict[str, str | None]]:
    """A doctor record or a Target as (kind, frozen, stack)."""
    if path.is_dir():
        from gpuopt.evaluation import target as tgt
        from gpuopt.evaluation.store import Store

        loaded, _ = tgt.load(Store.open(path))
        return ("target", *_target(loaded))
    from gpuopt._files import read_bounded
    from gpuopt.evaluation import jsonio

    data = read_bounded(path, "doctor record or target.json", MAX_BYTES)
    try:
        # Strict JSON (deep nesting, duplicate keys, NaN refused), as every record gpuopt reads.
        doc = jsonio.parse(data, max_bytes=MAX_BYTES, what=path.name)
    except InputError as exc:
        raise _not_identity(path, f"not strict JSON: {exc.message}") from None
    if isinstance(doc, dict) and doc.get("schema") == "gpuopt.doctor/v1":
        doc = doc.get("data")
    if not isinstance(doc, dict):
        raise _not_identity(path, type(doc).__name__)
    try:
        if doc.get("format") in ("gpuopt.target/v1", "gpuopt.target/v2"):
            model = DiagnosticTarget if doc.get("mode") == "diagnostic" else Target
            return ("target", *_target(model.model_validate(doc)))
        return ("doctor", *_doctor(DoctorReport.model_validate(doc)))
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"])
        raise _not_identity(path, f"{where}: {err['msg']}") from None


def _not_identity(path: Path, observed: str) -> InputError:
    return InputError(
        "audit_record_invalid",
        f"{path} is not an identity record",
        path=str(path),
        expected="gpuopt doctor --json output, a target.json, or an artifact root",
        observed=observed,
    )


def _changes(a: dict[str, str | None], b: dict[str, str | None]) -> tuple[list[str], list[ComponentChange]]:
    checked = sorted(set(a) | set(b))
    changes = [ComponentChange(component=k, a=a.get(k), b=b.get(k)) for k in checked if a.get(k) != b.get(k)]
    return checked, changes


Flat = dict[str, str | None]


def _restrict(a: Flat, b: Flat, keys: set[str]) -> tuple[Flat, Flat]:
    return {k: v for k, v in a.items() if k in keys}, {k: v for k, v in b.items() if k in keys}


def versions(a: Path, b: Path) -> VersionAuditData:
    a_kind, a_frozen, a_stack = read_record(a)
    b_kind, b_frozen, b_stack = read_record(b)
    # Two records of one kind are compared on every key (a component that appears or disappears is a
    # change); a doctor record against a Target only on the keys both kinds carry.
    scope: Literal["all", "common"] = "all" if a_kind == b_kind else "common"
    if scope == "common":
        a_frozen, b_frozen = _restrict(a_frozen, b_frozen, set(a_frozen) & set(b_frozen))
        a_stack, b_stack = _restrict(a_stack, b_stack, set(a_stack) & set(b_stack))
    frozen_checked, frozen_diff = _changes(a_frozen, b_frozen)
    stack_checked, stack_changes = _changes(a_stack, b_stack)
    reasons = [f"frozen_mismatch:{c.component}" for c in frozen_diff]
    if not stack_changes:
        reasons.append("software_stack_did_not_change")
    elif len(stack_changes) > 1:
        reasons.append(f"more_than_one_component_changed:{len(stack_changes)}")
    return VersionAuditData(
        a=str(a),
        b=str(b),
        a_kind=a_kind,
        b_kind=b_kind,
        keys_compared=scope,
        single_variable=not reasons,
        frozen_checked=frozen_checked,
        frozen_differences=frozen_diff,
        stack_checked=stack_checked,
        stack_changes=stack_changes,
        reasons=reasons,
        requirements=REQUIREMENTS,
    )
