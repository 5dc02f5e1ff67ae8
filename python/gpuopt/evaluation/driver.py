"""The workload driver protocol (``gpuopt.driver/v1``): declaration, launch environment, request, and the
gates gpuopt applies to a driver's result (spec §4).

The driver is the user's program; gpuopt launches it with argv (never a shell), hands it a request and reads
back a result it validates strictly. Correctness is computed here from the frozen rules: the driver's own
``passed`` cannot override a failed rule.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpuopt.errors import InputError
from gpuopt.evaluation import formats, jsonio, redaction
from gpuopt.evaluation.store import Store, env_digest, env_key, hash_tree
from gpuopt.models.evaluation.driver import (
    DEFAULT_ENV_INHERIT,
    ArgFile,
    DriverDeclaration,
    DriverRequest,
    Executable,
    HashedInput,
    InheritedVariable,
    InheritedVariableV1,
    NormalizedDriver,
)
from gpuopt.models.evaluation.store import ScanLimits
from gpuopt.provenance import file_sha256

NEVER_INHERITED = ("CUDA_VISIBLE_DEVICES",)
INPUT_LIMITS = ScanLimits()


def _matches(name: str, patterns: list[str]) -> bool:
    return any((p.endswith("*") and name.startswith(p[:-1])) or name == p for p in patterns)


def inherited_names(patterns: list[str], environ: Mapping[str, str]) -> list[str]:
    return sorted(n for n in environ if n not in NEVER_INHERITED and _matches(n, patterns))


def recorded_value(name: str, value: str, record: list[str]) -> str | None:
    """The value a Target records for an inherited variable: only where ``record`` (exact names or
    ``PREFIX*``) names it *and* neither its name nor its value looks secret (``gpuopt.evaluation.redaction``):
    a ``G*`` pattern never records ``GITHUB_PAT``, nor ``DATABASE_URL`` a password inside the URL."""
    if not _matches(name, record) or redaction.secret_reason(name, value) is not None:
        return None
    return value


def snapshot_environment(
    patterns: list[str], environ: Mapping[str, str], *, key: bytes, record: list[str]
) -> list[InheritedVariable]:
    """The inherited variables: names and keyed digests; values only as :func:`recorded_value` allows."""
    return [
        InheritedVariable(
            name=name,
            hmac_sha256=env_digest(key, name, environ[name]),
            value=recorded_value(name, environ[name], record),
        )
        for name in inherited_names(patterns, environ)
    ]


def check_literals(env: Mapping[str, str]) -> None:
    """Literals are recorded in the Target as they are: one that looks secret by name or by value
    (``gpuopt.evaluation.redaction``) is refused (``field_invalid``), before anything is written; it
    belongs in ``env_inherit``, where only a keyed digest is recorded. The message names the rule, never
    the value."""
    for name, value in env.items():
        reason = redaction.secret_reason(name, value)
        if reason is not None:
            raise InputError(
                "field_invalid",
                f"driver.env.{name} looks like a secret ({reason}), and literals are recorded in the Target "
                "as plaintext: inherit it instead (env_inherit), where only a keyed digest is recorded",
                path=f"driver.env.{name}",
                expected="a literal that is not a secret (references/secrets.md)",
            )


def _link_chain(launch: str) -> tuple[list[str], str]:
    links = []
    current = launch
    for _ in range(40):
        if not os.path.islink(current):
            break
        target = os.readlink(current)
        current = os.path.normpath(os.path.join(os.path.dirname(current), target))
        links.append(current)
    return links, os.path.realpath(launch)


def _executable(argv0: str, cwd: Path, environ: Mapping[str, str]) -> Executable:
    if "/" in argv0:
        launch = os.path.abspath(os.path.join(cwd, argv0))
    else:
        found = shutil.which(argv0, path=environ.get("PATH", os.defpath))
        if found is None:
            raise InputError(
                "driver_not_found",
                f"the driver program {argv0!r} is not on the inherited PATH",
                path="driver.argv[0]",
                observed=argv0,
            )
        launch = os.path.abspath(found)
    links, resolved = _link_chain(launch)
    if not os.path.isfile(resolved) or not os.access(resolved, os.X_OK):
        raise InputError(
            "driver_not_found",
            f"the driver program {launch} is not an executable file",
            path="driver.argv[0]",
            observed=launch,
        )
    return Executable(launch_path=launch, links=links, resolved=resolved, sha256=file_sha256(resolved))


def normalize(
    decl: DriverDeclaration, *, cwd: Path, environ: Mapping[str, str], key: bytes
) -> NormalizedDriver:
    """Resolves, hashes and snapshots a driver declaration (spec §4.1); ``key`` is the root's digest key."""
    patterns = list(decl.env_inherit) if decl.env_inherit is not None else list(DEFAULT_ENV_INHERIT)
    check_literals(decl.env)
    executable = _executable(decl.argv[0], cwd, environ)
    argv = [executable.launch_path]
    files = []
    for index, arg in enumerate(decl.argv[1:], start=1):
        candidate = os.path.join(cwd, arg)
        if not arg.startswith("-") and os.path.isfile(candidate):
            path = os.path.abspath(candidate)
            files.append(ArgFile(index=index, path=path, sha256=file_sha256(path)))
            argv.append(path)
        else:
            argv.append(arg)
    inputs = []
    for index, item in enumerate(decl.inputs):
        path = os.path.abspath(os.path.join(cwd, item))
        if not os.path.exists(path):
            raise InputError(
                "field_invalid",
                f"driver input {item!r} does not exist",
                path=f"driver.inputs[{index}]",
                observed=item,
            )
        frozen = hash_tree(path, exclude=[], limits=INPUT_LIMITS)
        inputs.append(
            HashedInput(
                path=path, digest=frozen.digest, file_count=frozen.file_count, total_bytes=frozen.total_bytes
            )
        )
    core: dict[str, Any] = {
        "protocol": decl.protocol,
        "argv": argv,
        "request_flag": decl.request_flag,
        "executable": executable.model_dump(),
        "files": [f.model_dump() for f in files],
        "inputs": [i.model_dump() for i in inputs],
        "env": dict(decl.env),
        "env_inherit": patterns,
        "same_process": decl.same_process,
        "env_record": list(decl.env_record),
    }
    if decl.capabilities:  # absent when none, so Targets frozen before capabilities keep their identity
        core["capabilities"] = sorted(set(decl.capabilities))
    inherited = snapshot_environment(patterns, environ, key=key, record=list(decl.env_record))
    return NormalizedDriver.model_validate({**core, "identity": jsonio.digest(core), "inherited": inherited})


def identity_core(driver: NormalizedDriver) -> dict[str, Any]:
    exclude = {"identity", "inherited"} | ({"env_record"} if driver.env_record is None else set())
    exclude |= {"capabilities"} if driver.capabilities is None else set()
    return driver.model_dump(mode="json", exclude=exclude)


def _file_sha(path: str) -> str:
    """A file's sha256, or ``absent``."""
    try:
        return file_sha256(path)
    except InputError:
        return "absent"


def check_driver(driver: NormalizedDriver) -> None:
    """Re-hashes the driver program, its file arguments and inputs: any change is ``driver_changed``."""

    def changed(path: str, what: str, expected: str, observed: str) -> InputError:
        return InputError(
            "driver_changed",
            f"the driver changed since it was frozen: {what}",
            path=path,
            expected=expected,
            observed=observed,
        )

    exe = driver.executable
    links, resolved = _link_chain(exe.launch_path)
    if links != exe.links or resolved != exe.resolved:
        raise changed(
            "driver.executable", f"{exe.launch_path} now resolves elsewhere", exe.resolved, resolved
        )
    sha = _file_sha(resolved)
    if sha != exe.sha256:
        raise changed("driver.executable.sha256", f"{resolved} has other content", exe.sha256, sha)
    for item in driver.files:
        sha = _file_sha(item.path)
        if sha != item.sha256:
            raise changed(f"driver.files[{item.index}]", f"{item.path} has other content", item.sha256, sha)
    for index, inp in enumerate(driver.inputs):
        try:
            digest = hash_tree(inp.path, exclude=[], limits=INPUT_LIMITS).digest
        except InputError as exc:
            digest = f"unreadable ({exc.code})"
        if digest != inp.digest:
            raise changed(f"driver.inputs[{index}]", f"{inp.path} has other content", inp.digest, digest)
    if jsonio.digest(identity_core(driver)) != driver.identity:
        raise changed(
            "driver.identity", "the frozen declaration does not hash to its identity", driver.identity, ""
        )


def _frozen_digest(variable: InheritedVariable | InheritedVariableV1) -> str:
    return variable.sha256 if isinstance(variable, InheritedVariableV1) else variable.hmac_sha256


def _digest_now(
    variable: InheritedVariable | InheritedVariableV1 | None, key: bytes | None, name: str, value: str
) -> str:
    if isinstance(variable, InheritedVariableV1) or key is None:  # a gpuopt.target/v1 record
        return jsonio.sha256_hex(value.encode("utf-8", "surrogateescape"))
    return env_digest(key, name, value)


def check_environment(driver: NormalizedDriver, environ: Mapping[str, str], store: Store) -> None:
    """The inherited variables must be the ones frozen (names and values): else ``environment_changed``.
    Digests are keyed by ``store``'s ``keys/env.key`` (Targets of format v1 kept unsalted sha256)."""
    frozen = {v.name: v for v in driver.inherited}
    v1 = driver.env_record is None
    key = None if v1 else env_key(store)
    now = {
        name: _digest_now(frozen.get(name), key, name, environ[name])
        for name in inherited_names(driver.env_inherit, environ)
    }
    then = {name: _frozen_digest(v) for name, v in frozen.items()}
    for name in sorted(set(now) | set(then)):
        if now.get(name) != then.get(name):
            shown = "set" if name in then else "unset"
            observed = "set" if name in now else "unset"
            raise InputError(
                "environment_changed",
                f"the inherited variable {name} changed since the Target was frozen",
                path=f"driver.inherited.{name}",
                expected=then.get(name, shown),
                observed=now.get(name, observed),
            )


def launch_environment(
    driver: NormalizedDriver,
    environ: Mapping[str, str],
    *,
    gpus: list[str],
    request_path: Path,
    output_dir: Path,
    call_index: int,
    tmpdir: Path,
) -> dict[str, str]:
    """The driver's whole environment: verified inherited values, literals, and gpuopt's own variables."""
    env = {v.name: environ[v.name] for v in driver.inherited if v.name in environ}
    env.update(driver.env)
    env.update(
        {
            "CUDA_VISIBLE_DEVICES": ",".join(gpus),
            "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
            "GPUOPT_REQUEST": str(request_path),
            "GPUOPT_OUTPUT_DIR": str(output_dir),
            "GPUOPT_CALL_INDEX": str(call_index),
            "TMPDIR": str(tmpdir),
        }
    )
    return env


def launch_argv(driver: NormalizedDriver, request_path: Path) -> list[str]:
    return [*driver.argv, driver.request_flag, str(request_path)]


def build_request(fields: dict[str, Any]) -> DriverRequest:
    """A driver request with its ``request_digest`` (SHA-256 of the canonical request without it)."""
    core = {k: v for k, v in fields.items() if k != "request_digest"}
    core["protocol"] = formats.DRIVER_REQUEST
    return DriverRequest.model_validate({**core, "request_digest": jsonio.digest(core)})
