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

    argv: Annotated[list[Arg], Field(min_length=1, max_length=256)]
    request_flag: Annotated[str, StringConstraints(pattern=r"^-.{0,63}$")] = "--request"
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
    same_process: bool = False
    capabilities: list[Capability] = Field(
        default_factory=list,
        description="Optional protocol capabilities: torch_trace = writes a Kineto trace of its measured "
        "region to $GPUOPT_TORCH_TRACE when gpuopt sets it (gpuopt capture with tool torch)",
    )
    protocol: Literal["gpuopt.driver/v1"] = "gpuopt.driver/v1"


class Executable(Record):
    """``argv[0]`` resolved through the inherited PATH; links stay in the launched path."""

    launch_path: str
    links: list[str] = Field(description="The symbolic-link chain from launch_path to the final file")
    resolved: str
    sha256: Sha256


class ArgFile(Record):
    """An argument naming an existing regular file: made absolute and hashed."""

    index: Annotated[int, Field(ge=1)]
    path: str
    sha256: Sha256


class HashedInput(Record):
    """A declared input tree or file, hashed like an object (not stored)."""

    path: str
    digest: Sha256
    file_count: Count
    total_bytes: Count


class InheritedVariable(Record):
    """An inherited variable's snapshot (``gpuopt.target/v2``): its name, HMAC-SHA256 of name and value under
    the root's private key ``keys/env.key`` (equality is checked, a short secret cannot be guessed from it),
    and the value only when the declaration's ``env_record`` marks the name safe."""

    name: EnvName
    hmac_sha256: Sha256
    value: str | None


class InheritedVariableV1(Record):
    """An inherited variable as ``gpuopt.target/v1`` recorded it (unsalted sha256; the value unless the name
    looked secret). Read and checked, never written."""

    name: EnvName
    sha256: Sha256
    value: str | None
    secret: bool


class NormalizedDriver(Record):
    """The driver as frozen in a Target; ``identity`` hashes everything but ``inherited`` and itself."""

    protocol: Literal["gpuopt.driver/v1"]
    argv: list[str]
    request_flag: str
    executable: Executable
    files: list[ArgFile]
    inputs: list[HashedInput]
    env: dict[str, str]
    env_inherit: list[str]
    same_process: bool
    env_record: list[str] | None = Field(
        default=None, description="Absent in gpuopt.target/v1 records (which kept values by name)"
    )
    capabilities: list[Capability] | None = Field(
        default=None, description="Declared capabilities; absent when none were declared"
    )
    identity: Sha256
    inherited: list[InheritedVariable | InheritedVariableV1]


# ---- request -----------------------------------------------------------------------------------------------


class CaseRef(Record):
    id: Name


class PathedDigest(Record):
    digest: ObjectDigest
    path: str


class Subject(Record):
    role: Role
    kind: VariantKind
    digest: ObjectDigest
    path: str


class Acquisition(Record):
    lifecycle: Literal["isolated", "same_process"]
    shared_state: list[Name]
    rebuilt_state: list[Name]


class Sampling(Record):
    samples_per_call: dict[Name, Annotated[int, Field(ge=1)]]
    warmup_per_call: Count
    input_seed: Annotated[int, Field(ge=0, le=2**53 - 1)]


class MetricUnit(Record):
    unit: Unit


class PairInfo(Record):
    index: Count
    order: Literal["AB", "BA"]


class DriverRequest(Record):
    """``calls/<NNNN>/request.json``: what one driver call is asked to do."""

    protocol: Literal["gpuopt.driver-request/v1"]
    request_digest: Sha256 = Field(description="SHA-256 of the canonical request without this field")
    target_id: str
    invocation_id: InvocationId
    call_index: Count
    operation: Operation
    case: CaseRef
    test_set: PathedDigest
    accuracy_reference: PathedDigest | None
    subjects: Annotated[list[Subject], Field(min_length=1, max_length=2)]
    acquisition: Acquisition
    sampling: Sampling
    metrics: dict[Name, MetricUnit]
    correctness_metrics: list[Name]
    pair: PairInfo | None
    output_dir: str
    driver_identity: Sha256


# ---- result ------------------------------------------------------------------------------------------------


class Window(Record):
    start_mono_ns: Annotated[int, Field(ge=0)]
    end_mono_ns: Annotated[int, Field(ge=0)]


class SubjectCorrectness(Record):
    status: Literal["passed", "failed"]
    metrics: Annotated[dict[Name, Finite], Field(max_length=256)]


class Measurement(Record):
    unit: Unit
    samples: Annotated[list[Finite], Field(max_length=1_000_000)]


class SubjectResult(Record):
    role: Role
    digest: Sha256
    window: Window | None
    correctness: SubjectCorrectness
    measurements: dict[Name, Measurement]


class LineageLayer(Record):
    kind: Literal["base", "overlay"]
    identity: Annotated[str, StringConstraints(min_length=1, max_length=512)]


class Component(Record):
    name: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    identity: Annotated[str, StringConstraints(min_length=1, max_length=512)]


class RuntimeProvenance(Record):
    kind: Literal["host", "container"]
    image_digest: str | None
    lineage_complete: bool
    lineage: list[LineageLayer]
    components: list[Component]


class ReportedRuntime(Record):
    """The runtime identity a driver reports; equal on every call of a Target."""

    gpu_uuids: list[str]
    gpu_names: list[str]
    driver_version: str | None
    cuda_runtime_version: str | None
    frameworks: dict[
        Annotated[str, StringConstraints(min_length=1, max_length=128)],
        Annotated[str, StringConstraints(max_length=256)],
    ]
    provenance: RuntimeProvenance


class Artifact(Record):
    kind: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    path: Annotated[str, StringConstraints(min_length=1, max_length=1024)]
    sha256: Sha256


class DriverCleanup(Record):
    status: str
    live_tasks: list[Text]


class DriverResult(Record):
    """``output/result.json`` as the driver writes it."""

    protocol: Literal["gpuopt.driver-result/v1"]
    request_digest: Sha256
    call_index: Count
    case_id: Name
    subjects: list[SubjectResult]
    runtime_identity: ReportedRuntime
    artifacts: Annotated[list[Artifact], Field(max_length=1024)]
    cleanup: DriverCleanup
