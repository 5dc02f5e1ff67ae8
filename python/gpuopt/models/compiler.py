"""Documents about compiler reports and artifacts: ``ptxas -v``, ``cuobjdump -res-usage``, Triton caches,
TorchInductor caches. Every fact names the stage it was read from; text in a stage proves only that the
text is there (no claim of fusion, elimination or speed is made from it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.doctor import ToolIdentity
from gpuopt.models.envelope import FileIdentity

Stage = Literal["source", "ttir", "ttgir", "llvm_ir", "ptx", "cubin", "sass", "metadata", "report"]

CLAIMS_NOTE = (
    "Facts are labelled with the stage they were read from. An op, intrinsic or instruction in a stage's "
    "text proves only that it is in that text; kernel and op names are names, not evidence of fusion, "
    "elimination or speed."
)


class CompilerMessage(Model):
    level: Literal["info", "warning", "error", "fatal"]
    text: str


class PtxasFunction(Model):
    """One function as ``ptxas -v`` describes it (stage ``report``: ptxas's own statement)."""

    target: str | None = Field(description="sm_NN the function was compiled for")
    function: str
    kind: Literal["entry", "function"] = Field(description="entry: a kernel; function: a device function")
    registers: int | None
    barriers: int | None
    stack_frame_bytes: int | None
    spill_store_bytes: int | None
    spill_load_bytes: int | None
    cumulative_stack_bytes: int | None
    shared_bytes: int | None = Field(description="`N bytes smem` (older toolkits print it)")
    constant_bytes: dict[str, int] = Field(description="`N bytes cmem[B]` by bank B")
    compile_time_ms: float | None


class PtxasReport(Model):
    stage: Literal["report"] = "report"
    functions: list[PtxasFunction]
    global_bytes: list[int] = Field(description="`N bytes gmem` lines, one per compilation")
    messages: list[CompilerMessage] = Field(description="ptxas info/warning/error lines that are not sizes")


class ResUsageFunction(Model):
    """One function as ``cuobjdump -res-usage`` lists it."""

    cubin_index: int = Field(description="Which ELF image of the binary (0-based, in listing order)")
    arch: str | None = Field(description="From the fatbin header; None for a bare cubin (not printed)")
    function: str
    registers: int | None
    stack_bytes: int | None
    shared_bytes: int | None
    local_bytes: int | None
    constant_bytes: dict[str, int] = Field(description="CONSTANT[B] by bank B")
    texture: int | None
    surface: int | None
    sampler: int | None


class ResUsageReport(Model):
    stage: Literal["report"] = "report"
    functions: list[ResUsageFunction]
    tool: ToolIdentity | None = Field(default=None, description="cuobjdump, when a binary was given")


class StageFile(Model):
    """One artifact file of a compilation and the stage it holds."""

    stage: Stage
    path: str
    size_bytes: int
    sha256: str


class OpCount(Model):
    """How often an op / intrinsic / instruction appears in one stage's text."""

    stage: Stage
    op: str
    count: int


class SassFunctionFacts(Model):
    """Facts from a cubin's disassembly (stage ``sass``)."""

    stage: Literal["sass"] = "sass"
    function: str
    arch: str | None
    instruction_count: int
    registers: int | None
    frame_size_bytes: int | None
    class_counts: dict[str, int] = Field(description="Non-zero instruction classes")
    signatures_found: list[str] = Field(description="Catalog signatures whose patterns are in the code")


class TritonKernel(Model):
    """One compiled Triton kernel in a cache directory."""

    name: str
    cache_dir: str
    hash: str | None
    backend: str | None
    arch: str | None = Field(description="Target from the metadata, e.g. 90 (stage metadata)")
    num_warps: int | None
    num_ctas: int | None
    num_stages: int | None
    shared_bytes: int | None = Field(description="Static shared memory from the metadata")
    triton_version: str | None
    stages: list[StageFile]
    missing_stages: list[str] = Field(description="Stages of a full CUDA compile whose file is absent")
    module_attributes: dict[str, str] = Field(description="TTGIR module attributes (stage ttgir)")
    ptx_target: str | None = Field(description="`.target` of the PTX (stage ptx)")
    ptx_version: str | None
    ops: list[OpCount] = Field(description="Op histograms of the IR stages and the PTX")
    sass: list[SassFunctionFacts] | None = Field(description="None when the cubin was not disassembled")
    unmodeled_metadata: list[str] = Field(description="Metadata keys read but not turned into facts")


class TritonReport(Model):
    root: str
    kernels: list[TritonKernel]
    tool: ToolIdentity | None = Field(description="The disassembler used for cubins, if any")
    claims_note: str = CLAIMS_NOTE


class InductorLaunch(Model):
    """One kernel launch or library call in a generated ``call`` function, in code order."""

    stage: Literal["source"] = "source"
    order: int
    kind: Literal["triton", "extern", "aten"]
    name: str
    line: int
    source_nodes: list[str] = Field(description="From the `Topologically Sorted Source Nodes` comment")
    original_aten: list[str] = Field(description="From the `Original ATen` comment (text in generated code)")


class InductorOutputCode(Model):
    """A generated wrapper module (``output_code.py``): kernels it defines and the calls it makes."""

    stage: Literal["source"] = "source"
    file: FileIdentity
    kernels_defined: list[str]
    launches: list[InductorLaunch]


class InductorKernel(Model):
    """A generated Triton kernel module (stage ``source``) and, when cached, its compiled form."""

    stage: Literal["source"] = "source"
    name: str
    file: FileIdentity
    heuristic: str | None = Field(description="triton_heuristics decorator: pointwise, reduction, ...")
    size_hints: dict[str, int]
    device_cc: int | None
    num_load: int | None
    num_store: int | None
    num_reduction: int | None
    mutated_arg_names: list[str]
    best_config: dict[str, int | str | bool | None] | None = Field(
        description="The autotuner's `.best_config` beside the module (stage metadata)"
    )
    triton_cache_hash: str | None
    triton: TritonKernel | None = Field(description="The compiled kernel in the cache's triton/ folder")
    triton_link: Literal["best_config_hash", "only_kernel_of_that_name"] | None = Field(
        default=None, description="How `triton` was found; None when no unique compiled kernel was found"
    )
    triton_cache_entries_of_that_name: int = Field(
        default=0, description="Compiled kernels with this name in the cache (autotuning makes several)"
    )


class InductorReport(Model):
    root: str
    output_code: list[InductorOutputCode]
    kernels: list[InductorKernel]
    tool: ToolIdentity | None
    claims_note: str = CLAIMS_NOTE
