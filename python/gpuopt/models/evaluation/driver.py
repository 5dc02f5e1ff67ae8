"""The workload driver protocol (``gpuopt.driver/v1``): declaration, request and result."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gpuopt.models.evaluation.common import (
    Count,
    Finite,
    InvocationId,
    Name,
    ObjectDigest,
    Operation,
    Record,
    Role,
    Sha256,
    Text,
    Unit,
    VariantKind,
)

DEFAULT_ENV_INHERIT = [
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "TZ",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CUDA_HOME",
    "CUDA_*",
    "NCCL_*",
    "TORCH_*",
    "TRITON_*",
    "PYTORCH_*",
    "OMP_*",
    "MKL_*",
    "HF_*",
]
"""Inherited variables when a declaration omits ``env_inherit`` (written explicitly into the Target)."""

EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]
EnvPattern = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}\*?$")]
Arg = Annotated[str, StringConstraints(min_length=1, max_length=4096)]
Capability = Literal["torch_trace"]


class DriverDeclaration(Record):
    """The driver as a readiness request declares it."""

    argv: Annotated[list[Arg], Field(min_length=1, max_length=256)] = Field(
        description="The command that runs the driver, without a shell: argv[0] is resolved through the "
        "inherited PATH; later arguments naming existing files are hashed"
    )
    request_flag: Annotated[str, StringConstraints(pattern=r"^-.{0,63}$")] = Field(
        default="--request",
        description="The flag gpuopt appends before the request file's path (starts with -, at most 64 "
        "characters)",
    )
    inputs: list[Arg] = Field(
        default_factory=list, description="Files or trees the driver loads; hashed, not copied"
    )
    env: dict[EnvName, Annotated[str, StringConstraints(max_length=4096)]] = Field(
        default_factory=dict, description="Literal variables, part of the identity"
    )
    env_inherit: list[EnvPattern] | None = Field(
        default=None,
        description="Names and PREFIX* patterns inherited from the caller; omitted = the default list",
    )
    env_record: list[EnvPattern] = Field(
        default_factory=list,
        description="Inherited names and PREFIX* patterns whose values are safe to record in the Target; "
        "every other inherited value keeps only its name and a keyed digest",
    )
    same_process: bool = Field(
        default=False,
        description="True when the driver can run both subjects of a pair in one call (the same_process "
        "lifecycle)",
    )
    capabilities: list[Capability] = Field(
        default_factory=list,
        description="Optional protocol capabilities: torch_trace = writes a Kineto trace of its measured "
        "region to $GPUOPT_TORCH_TRACE when gpuopt sets it (gpuopt capture with tool torch)",
    )
    protocol: Literal["gpuopt.driver/v1"] = Field(
        default="gpuopt.driver/v1", description="The driver protocol: always gpuopt.driver/v1"
    )


class Executable(Record):
    """``argv[0]`` resolved through the inherited PATH; links stay in the launched path."""

    launch_path: str = Field(
        description="The absolute path gpuopt launches (symbolic links kept: a virtual environment's "
        "python depends on them)"
    )
    links: list[str] = Field(description="The symbolic-link chain from launch_path to the final file")
    resolved: str = Field(description="The final file after following every link")
    sha256: Sha256 = Field(
        description="SHA-256 of the final file; a change before an invocation is driver_changed"
    )


class ArgFile(Record):
    """An argument naming an existing regular file: made absolute and hashed."""

    index: Annotated[int, Field(ge=1)] = Field(
        description="Its position in argv (1 = the first argument after the executable)"
    )
    path: str = Field(description="The file's absolute path, as launched")
    sha256: Sha256 = Field(
        description="SHA-256 of the file's bytes; a change before an invocation is driver_changed"
    )


class HashedInput(Record):
    """A declared input tree or file, hashed like an object (not stored)."""

    path: str = Field(description="The input's absolute path")
    digest: Sha256 = Field(
        description="SHA-256 of its canonical tree manifest (as an object's digest; not stored)"
    )
    file_count: Count = Field(description="Files in it")
    total_bytes: Count = Field(description="Sum of its files' sizes (bytes)")


class InheritedVariable(Record):
    """An inherited variable's snapshot (``gpuopt.target/v2``): its name, HMAC-SHA256 of name and value under
    the root's private key ``keys/env.key`` (equality is checked, a short secret cannot be guessed from it),
    and the value only when the declaration's ``env_record`` marks the name safe."""

    name: EnvName = Field(description="The variable's name")
    hmac_sha256: Sha256 = Field(
        description="HMAC-SHA256 of name and value under the root's key keys/env.key: a changed value is "
        "environment_changed"
    )
    value: str | None = Field(
        description="The value, only when env_record marks the name safe to record; null otherwise"
    )


class InheritedVariableV1(Record):
    """An inherited variable as ``gpuopt.target/v1`` recorded it (unsalted sha256; the value unless the name
    looked secret). Read and checked, never written."""

    name: EnvName = Field(description="The variable's name")
    sha256: Sha256 = Field(description="SHA-256 of its value (unsalted)")
    value: str | None = Field(description="The value, unless the name looked secret (then null)")
    secret: bool = Field(
        description="True when the name matched a secret pattern (*TOKEN*, *SECRET*, *PASSWORD*, *KEY*, "
        "*CREDENTIAL*) and the value was not kept"
    )


class NormalizedDriver(Record):
    """The driver as frozen in a Target; ``identity`` hashes everything but ``inherited`` and itself."""

    protocol: Literal["gpuopt.driver/v1"] = Field(description="The driver protocol: always gpuopt.driver/v1")
    argv: list[str] = Field(
        description="The command as launched: the executable's launch path and every argument, file "
        "arguments made absolute"
    )
    request_flag: str = Field(description="The flag gpuopt appends before the request file's path")
    executable: Executable = Field(description="argv[0] resolved, with its link chain and hash")
    files: list[ArgFile] = Field(description="Every argument that names an existing regular file, hashed")
    inputs: list[HashedInput] = Field(description="Every declared input file or tree, hashed")
    env: dict[str, str] = Field(description="Literal variables set for every call (part of the identity)")
    env_inherit: list[str] = Field(
        description="Names and PREFIX* patterns inherited from the caller (the default list written out "
        "when omitted)"
    )
    same_process: bool = Field(description="True when the driver can run both subjects of a pair in one call")
    env_record: list[str] | None = Field(
        default=None, description="Absent in gpuopt.target/v1 records (which kept values by name)"
    )
    capabilities: list[Capability] | None = Field(
        default=None, description="Declared capabilities; absent when none were declared"
    )
    identity: Sha256 = Field(
        description="SHA-256 of the canonical driver without inherited and identity: what driver_changed "
        "compares"
    )
    inherited: list[InheritedVariable | InheritedVariableV1] = Field(
        description="Snapshot of each inherited variable present at readiness (re-checked before every "
        "invocation and call)"
    )


# ---- request -----------------------------------------------------------------------------------------------


class CaseRef(Record):
    id: Name = Field(description="The case to measure")


class PathedDigest(Record):
    digest: ObjectDigest = Field(description="The frozen tree")
    path: str = Field(description="Its materialized copy for this call (absolute path; read only)")


class Subject(Record):
    role: Role = Field(description="original, reference or candidate")
    kind: VariantKind = Field(
        description="source (a tree the driver builds or imports) or artifact (a built product)"
    )
    digest: ObjectDigest = Field(description="The subject's frozen tree; echo it in the result")
    path: str = Field(description="A fresh materialized copy of the subject for this call (absolute path)")


class Acquisition(Record):
    lifecycle: Literal["isolated", "same_process"] = Field(
        description="isolated: one subject in this call; same_process: both subjects of the pair in this call"
    )
    shared_state: list[Name] = Field(
        description="State to create once for the call and share between the subjects (same_process)"
    )
    rebuilt_state: list[Name] = Field(description="State to rebuild for each subject")


class Sampling(Record):
    samples_per_call: dict[Name, Annotated[int, Field(ge=1)]] = Field(
        description="Samples to report per metric, for each subject"
    )
    warmup_per_call: Count = Field(description="Unmeasured runs per subject before its samples")
    input_seed: Annotated[int, Field(ge=0, le=2**53 - 1)] = Field(
        description="Seed for the case's inputs: identical for both subjects of a pair (at most 2^53 - 1)"
    )


class MetricUnit(Record):
    unit: Unit = Field(description="The unit the metric's samples must be reported in (an exact match)")


class PairInfo(Record):
    index: Count = Field(description="The pair's index in the schedule")
    order: Literal["AB", "BA"] = Field(
        description="AB: reference first; BA: candidate first (the subjects list is already in this order)"
    )


class DriverRequest(Record):
    """``calls/<NNNN>/request.json``: what one driver call is asked to do."""

    protocol: Literal["gpuopt.driver-request/v1"] = Field(description="Always gpuopt.driver-request/v1")
    request_digest: Sha256 = Field(description="SHA-256 of the canonical request without this field")
    target_id: str = Field(description="The Target (tgt-<64hex>; a readiness smoke gets its provisional id)")
    invocation_id: InvocationId = Field(description="The invocation the call belongs to")
    call_index: Count = Field(description="The call's position in the plan; echo it in the result")
    operation: Operation = Field(
        description="The verb the call serves (readiness_smoke, baseline, noise, screen, target, "
        "final_audit, gate, capture)"
    )
    case: CaseRef = Field(description="The case to measure")
    test_set: PathedDigest = Field(description="The frozen test set and its materialized copy")
    accuracy_reference: PathedDigest | None = Field(
        description="The frozen accuracy reference and its copy; null when the Target has none"
    )
    subjects: Annotated[list[Subject], Field(min_length=1, max_length=2)] = Field(
        description="The subjects to run, in execution order"
    )
    acquisition: Acquisition = Field(
        description="The lifecycle and the state shared or rebuilt between subjects"
    )
    sampling: Sampling = Field(description="Samples per metric, warmup and the input seed")
    metrics: dict[Name, MetricUnit] = Field(
        description="Every metric to report, with its unit: the result must carry exactly these"
    )
    correctness_metrics: list[Name] = Field(
        description="Correctness metrics to report for each subject (the Target's rules, the contract's "
        "gates and diagnostics)"
    )
    pair: PairInfo | None = Field(description="The pair this call serves; null outside a comparison")
    output_dir: str = Field(
        description="Where to write result.json and the declared artifacts (absolute path); frozen after "
        "the call"
    )
    driver_identity: Sha256 = Field(description="The Target driver's identity")


# ---- result ------------------------------------------------------------------------------------------------


class Window(Record):
    start_mono_ns: Annotated[int, Field(ge=0)] = Field(
        description="When the subject's measurement began (CLOCK_MONOTONIC, ns; Python time.monotonic_ns())"
    )
    end_mono_ns: Annotated[int, Field(ge=0)] = Field(description="When it ended (CLOCK_MONOTONIC, ns)")


class SubjectCorrectness(Record):
    status: Literal["passed", "failed"] = Field(
        description="The driver's own correctness judgment: passed or failed (cannot override gpuopt's rules)"
    )
    metrics: Annotated[dict[Name, Finite], Field(max_length=256)] = Field(
        description="Each requested correctness metric's value (at most 256)"
    )


class Measurement(Record):
    unit: Unit = Field(description="The samples' unit: must equal the request's")
    samples: Annotated[list[Finite], Field(max_length=1_000_000)] = Field(
        description="The raw samples, as many as requested; finite and > 0 (>= 0 for a zero_allowed metric)"
    )


class SubjectResult(Record):
    role: Role = Field(description="The subject's role, as in the request")
    digest: Sha256 = Field(description="The subject's digest, as in the request")
    window: Window | None = Field(
        description="The subject's measurement window on the monotonic clock; null when not reported"
    )
    correctness: SubjectCorrectness = Field(description="The subject's correctness status and metrics")
    measurements: dict[Name, Measurement] = Field(description="Per requested metric: its unit and samples")


class LineageLayer(Record):
    kind: Literal["base", "overlay"] = Field(
        description="base (exactly one in a complete lineage) or overlay"
    )
    identity: Annotated[str, StringConstraints(min_length=1, max_length=512)] = Field(
        description="The layer's identity (an image digest or name)"
    )


class Component(Record):
    name: Annotated[str, StringConstraints(min_length=1, max_length=256)] = Field(
        description="A runtime component (a library, a compiler)"
    )
    identity: Annotated[str, StringConstraints(min_length=1, max_length=512)] = Field(
        description="Its version or digest"
    )


class RuntimeProvenance(Record):
    kind: Literal["host", "container"] = Field(description="host or container")
    image_digest: str | None = Field(description="The container image's digest; null on a host")
    lineage_complete: bool = Field(
        description="True on a host, or when the container's layers are all known; false narrows claims to "
        "this exact runtime (frozen_runtime_only)"
    )
    lineage: list[LineageLayer] = Field(description="The container's layers, base first (empty on a host)")
    components: list[Component] = Field(description="Other runtime components the driver identifies")


class ReportedRuntime(Record):
    """The runtime identity a driver reports; equal on every call of a Target."""

    gpu_uuids: list[str] = Field(description="UUIDs of the GPUs the driver sees; must equal the Target's")
    gpu_names: list[str] = Field(description="Their product names; must equal gpuopt's observation")
    driver_version: str | None = Field(
        description="NVIDIA driver version; must equal gpuopt's observation; null without a GPU"
    )
    cuda_runtime_version: str | None = Field(
        description="CUDA runtime version the workload uses; null when none"
    )
    frameworks: dict[
        Annotated[str, StringConstraints(min_length=1, max_length=128)],
        Annotated[str, StringConstraints(max_length=256)],
    ] = Field(description="Framework name -> version (torch, triton, ...)")
    provenance: RuntimeProvenance = Field(description="Host or container, and the container's lineage")


class Artifact(Record):
    kind: Annotated[str, StringConstraints(min_length=1, max_length=128)] = Field(
        description="What the file is (free text, e.g. kineto-trace)"
    )
    path: Annotated[str, StringConstraints(min_length=1, max_length=1024)] = Field(
        description="Relative POSIX path inside output_dir (unique, not result.json)"
    )
    sha256: Sha256 = Field(description="SHA-256 of the file's bytes: must match its frozen blob")


class DriverCleanup(Record):
    status: str = Field(description="Must be exactly confirmed: the driver released everything it started")
    live_tasks: list[Text] = Field(description="Tasks still alive; must be empty")


class DriverResult(Record):
    """``output/result.json`` as the driver writes it."""

    protocol: Literal["gpuopt.driver-result/v1"] = Field(description="Always gpuopt.driver-result/v1")
    request_digest: Sha256 = Field(description="The request's request_digest, echoed exactly")
    call_index: Count = Field(description="The request's call_index, echoed exactly")
    case_id: Name = Field(description="The request's case id, echoed exactly")
    subjects: list[SubjectResult] = Field(description="One result per requested subject, in request order")
    runtime_identity: ReportedRuntime = Field(
        description="The runtime the driver ran on: must equal the Target's reported identity on every call"
    )
    artifacts: Annotated[list[Artifact], Field(max_length=1024)] = Field(
        description="Every other file written to output_dir (at most 1024); an undeclared file is "
        "bundle_undeclared_member"
    )
    cleanup: DriverCleanup = Field(description="What the driver's cleanup did")
