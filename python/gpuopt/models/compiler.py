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
STAGE_TEXT = "The artifact stage the facts come from (source, ttir, ttgir, llvm_ir, ptx, cubin, sass, ...)"

CLAIMS_NOTE = (
    "Facts are labelled with the stage they were read from. An op, intrinsic or instruction in a stage's "
    "text proves only that it is in that text; kernel and op names are names, not evidence of fusion, "
    "elimination or speed."
)


class CompilerMessage(Model):
    level: Literal["info", "warning", "error", "fatal"] = Field(description="info, warning, error or fatal")
    text: str = Field(description="The line as ptxas printed it")


class PtxasFunction(Model):
    """One function as ``ptxas -v`` describes it (stage ``report``: ptxas's own statement)."""

    target: str | None = Field(description="sm_NN the function was compiled for")
    function: str = Field(description="Function name (mangled, as ptxas prints it)")
    kind: Literal["entry", "function"] = Field(description="entry: a kernel; function: a device function")
    registers: int | None = Field(description="Registers per thread (`Used N registers`)")
    barriers: int | None = Field(description="Named barriers used")
    stack_frame_bytes: int | None = Field(description="Stack frame per thread (bytes)")
    spill_store_bytes: int | None = Field(description="Register-spill stores (bytes)")
    spill_load_bytes: int | None = Field(description="Register-spill loads (bytes)")
    cumulative_stack_bytes: int | None = Field(description="Cumulative stack size including callees (bytes)")
    shared_bytes: int | None = Field(description="`N bytes smem` (older toolkits print it)")
    constant_bytes: dict[str, int] = Field(description="`N bytes cmem[B]` by bank B")
    compile_time_ms: float | None = Field(description="ptxas compile time for the function (ms)")


class PtxasReport(Model):
    stage: Literal["report"] = Field(
        default="report",
        description=STAGE_TEXT,
    )
    functions: list[PtxasFunction] = Field(description="One entry per function ptxas reported")
    global_bytes: list[int] = Field(description="`N bytes gmem` lines, one per compilation")
    messages: list[CompilerMessage] = Field(description="ptxas info/warning/error lines that are not sizes")


class ResUsageFunction(Model):
    """One function as ``cuobjdump -res-usage`` lists it."""

    cubin_index: int = Field(description="Which ELF image of the binary (0-based, in listing order)")
    arch: str | None = Field(description="From the fatbin header; None for a bare cubin (not printed)")
    function: str = Field(description="Function name as cuobjdump prints it")
    registers: int | None = Field(description="REG: registers per thread")
    stack_bytes: int | None = Field(description="STACK: stack per thread (bytes)")
    shared_bytes: int | None = Field(description="SHARED: static shared memory per block (bytes)")
    local_bytes: int | None = Field(description="LOCAL: local memory per thread (bytes)")
    constant_bytes: dict[str, int] = Field(description="CONSTANT[B] by bank B")
    texture: int | None = Field(description="TEXTURE: texture references")
    surface: int | None = Field(description="SURFACE: surface references")
    sampler: int | None = Field(description="SAMPLER: sampler references")


class ResUsageReport(Model):
    stage: Literal["report"] = Field(
        default="report",
        description=STAGE_TEXT,
    )
    functions: list[ResUsageFunction] = Field(description="One entry per function of each ELF image")
    tool: ToolIdentity | None = Field(default=None, description="cuobjdump, when a binary was given")


class StageFile(Model):
    """One artifact file of a compilation and the stage it holds."""

    stage: Stage = Field(description=STAGE_TEXT)
    path: str = Field(description="The stage's file")
    size_bytes: int = Field(description="Size of the stage's file (bytes)")
    blake3: str = Field(description="BLAKE3 of its content (gpuopt's file identity)")


class OpCount(Model):
    """How often an op / intrinsic / instruction appears in one stage's text."""

    stage: Stage = Field(description=STAGE_TEXT)
    op: str = Field(description="Op or instruction name")
    count: int = Field(description="Occurrences in that stage's file")


class SassFunctionFacts(Model):
    """Facts from a cubin's disassembly (stage ``sass``)."""

    stage: Literal["sass"] = Field(
        default="sass",
        description=STAGE_TEXT,
    )
    function: str = Field(description="Function name in the disassembly")
    arch: str | None = Field(description="SM architecture")
    instruction_count: int = Field(description="Instructions, trailing padding NOPs excluded")
    registers: int | None = Field(description="Registers per thread (nvdisasm)")
    frame_size_bytes: int | None = Field(description="Stack frame size (bytes, nvdisasm)")
    class_counts: dict[str, int] = Field(description="Non-zero instruction classes")
    signatures_found: list[str] = Field(description="Catalog signatures whose patterns are in the code")


class TritonKernel(Model):
    """One compiled Triton kernel in a cache directory."""

    name: str = Field(description="Kernel name")
    cache_dir: str = Field(description="Its Triton cache folder")
    hash: str | None = Field(description="The cache hash (folder name)")
    backend: str | None = Field(description="Backend from the metadata (cuda, hip, ...)")
    arch: str | None = Field(description="Target from the metadata, e.g. 90 (stage metadata)")
    num_warps: int | None = Field(description="Warps per program (metadata)")
    num_ctas: int | None = Field(description="CTAs per cluster (metadata)")
    num_stages: int | None = Field(description="Software pipelining stages (metadata)")
    shared_bytes: int | None = Field(description="Static shared memory from the metadata")
    triton_version: str | None = Field(description="Triton version from the metadata")
    stages: list[StageFile] = Field(description="The stage files present, with their identities")
    missing_stages: list[str] = Field(description="Stages of a full CUDA compile whose file is absent")
    module_attributes: dict[str, str] = Field(description="TTGIR module attributes (stage ttgir)")
    ptx_target: str | None = Field(description="`.target` of the PTX (stage ptx)")
    ptx_version: str | None = Field(description="`.version` of the PTX (stage ptx)")
    ops: list[OpCount] = Field(description="Op histograms of the IR stages and the PTX")
    sass: list[SassFunctionFacts] | None = Field(description="None when the cubin was not disassembled")
    unmodeled_metadata: list[str] = Field(description="Metadata keys read but not turned into facts")


class TritonReport(Model):
    root: str = Field(description="The cache folder read")
    kernels: list[TritonKernel] = Field(description="One entry per compiled kernel")
    tool: ToolIdentity | None = Field(description="The disassembler used for cubins, if any")
    claims_note: str = Field(default=CLAIMS_NOTE, description="What these facts do and do not establish")


class InductorLaunch(Model):
    """One kernel launch or library call in a generated ``call`` function, in code order."""

    stage: Literal["source"] = Field(
        default="source",
        description=STAGE_TEXT,
    )
    order: int = Field(description="Position of the launch in the generated call function (0-based)")
    kind: Literal["triton", "extern", "aten"] = Field(
        description="triton (a generated kernel), extern (a library call) or aten"
    )
    name: str = Field(description="Kernel or function launched")
    line: int = Field(description="Line of the launch in the output code")
    source_nodes: list[str] = Field(description="From the `Topologically Sorted Source Nodes` comment")
    original_aten: list[str] = Field(description="From the `Original ATen` comment (text in generated code)")


class InductorOutputCode(Model):
    """A generated wrapper module (``output_code.py``): kernels it defines and the calls it makes."""

    stage: Literal["source"] = Field(
        default="source",
        description=STAGE_TEXT,
    )
    file: FileIdentity = Field(description="The output-code file")
    kernels_defined: list[str] = Field(description="Triton kernels the file defines")
    launches: list[InductorLaunch] = Field(description="Launches in the file's call function, in order")


class InductorKernel(Model):
    """A generated Triton kernel module (stage ``source``) and, when cached, its compiled form."""

    stage: Literal["source"] = Field(
        default="source",
        description=STAGE_TEXT,
    )
    name: str = Field(description="Kernel name")
    file: FileIdentity = Field(description="The file that defines it")
    heuristic: str | None = Field(description="triton_heuristics decorator: pointwise, reduction, ...")
    size_hints: dict[str, int] = Field(description="size_hints of the decorator")
    device_cc: int | None = Field(description="Compute capability from the decorator's device properties")
    num_load: int | None = Field(description="Loads in the kernel (inductor_meta)")
    num_store: int | None = Field(description="Stores in the kernel (inductor_meta)")
    num_reduction: int | None = Field(description="Reductions in the kernel (inductor_meta)")
    mutated_arg_names: list[str] = Field(description="Arguments the kernel writes in place")
    best_config: dict[str, int | str | bool | None] | None = Field(
        description="The autotuner's `.best_config` beside the module (stage metadata)"
    )
    triton_cache_hash: str | None = Field(
        description="Hash of the compiled kernel in the Triton cache, when found"
    )
    triton: TritonKernel | None = Field(description="The compiled kernel in the cache's triton/ folder")
    triton_link: Literal["best_config_hash", "only_kernel_of_that_name"] | None = Field(
        default=None, description="How `triton` was found; None when no unique compiled kernel was found"
    )
    triton_cache_entries_of_that_name: int = Field(
        default=0, description="Compiled kernels with this name in the cache (autotuning makes several)"
    )


class InductorReport(Model):
    root: str = Field(description="The cache folder read")
    output_code: list[InductorOutputCode] = Field(description="Generated output-code files")
    kernels: list[InductorKernel] = Field(description="Generated Triton kernels")
    tool: ToolIdentity | None = Field(description="The disassembler used for cubins, if any")
    claims_note: str = Field(default=CLAIMS_NOTE, description="What these facts do and do not establish")
