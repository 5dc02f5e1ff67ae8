"""Compiler reports and artifacts as facts with stage labels.

* :func:`ptxas` — ``ptxas -v`` / ``nvcc -Xptxas -v`` output (registers, barriers, stack, spills, smem, cmem).
* :func:`res_usage` — ``cuobjdump -res-usage`` output, or a binary run through it.
* :func:`triton` — a Triton cache folder: metadata, stage files, IR/PTX facts, SASS facts of the cubin.
* :func:`inductor` — a TorchInductor cache or output code: generated kernels, launches, Triton metadata.

Each returns a :class:`Parsed` (the pydantic report, what was seen but not modeled, the input files);
:func:`table` flattens a report into one polars row per function or kernel.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from pydantic import BaseModel

from gpuopt._compiler import inductor as _inductor
from gpuopt._compiler import ptxas as _ptxas
from gpuopt._compiler import res_usage as _res_usage
from gpuopt._compiler import triton as _triton
from gpuopt._compiler._text import read_text
from gpuopt.errors import GpuoptError, InputError
from gpuopt.models.compiler import (
    InductorKernel,
    InductorOutputCode,
    InductorReport,
    PtxasReport,
    ResUsageReport,
    TritonKernel,
    TritonReport,
)
from gpuopt.models.envelope import FileIdentity, UnmodeledItem

if TYPE_CHECKING:
    from collections.abc import Iterator

    import polars as pl

    from gpuopt.models.doctor import ToolIdentity

R = TypeVar("R", bound=BaseModel)
SassTool = str  # "nvdisasm" (registers from .nv.info) or "cuobjdump"


@dataclass(frozen=True)
class Parsed(Generic[R]):
    """A compiler document with what was recognised but not modeled and the files it was read from."""

    report: R
    unmodeled: list[UnmodeledItem] = field(default_factory=list)
    inputs: list[FileIdentity] = field(default_factory=list)


def _identity(path: Path | None) -> list[FileIdentity]:
    from gpuopt.provenance import file_identity

    return [] if path is None else [file_identity(path)]


@contextlib.contextmanager
def _naming(path: Path | None) -> Iterator[None]:
    """A report's parse error names the file it was found in."""
    try:
        yield
    except GpuoptError as exc:
        if exc.path is None and path is not None:
            exc.path = str(path)
        raise


def ptxas(path_or_text: str | os.PathLike[str] | bytes) -> Parsed[PtxasReport]:
    """Parses ``ptxas -v`` output (a file, or the text itself)."""
    text, path = read_text(path_or_text, "ptxas -v report")
    with _naming(path):
        report, unmodeled = _ptxas.parse(text)
    return Parsed(report, unmodeled, _identity(path))


def res_usage(path_or_text: str | os.PathLike[str] | bytes) -> Parsed[ResUsageReport]:
    """Parses ``cuobjdump -res-usage`` output; a binary is run through cuobjdump (version recorded)."""
    from gpuopt.sass import binary_kind

    tool: ToolIdentity | None = None
    if not isinstance(path_or_text, bytes) and not (isinstance(path_or_text, str) and "\n" in path_or_text):
        path = Path(path_or_text)
        if path.is_file() and binary_kind(path) is not None:
            text, tool = _run_res_usage(path)
            with _naming(path):
                functions, unmodeled = _res_usage.parse(text)
            return Parsed(ResUsageReport(functions=functions, tool=tool), unmodeled, _identity(path))
    text, src = read_text(path_or_text, "cuobjdump -res-usage report")
    with _naming(src):
        functions, unmodeled = _res_usage.parse(text)
    return Parsed(ResUsageReport(functions=functions), unmodeled, _identity(src))


def _run_res_usage(path: Path) -> tuple[str, ToolIdentity]:
    from gpuopt.tools import require_tool

    tool = require_tool("cuobjdump")
    done = subprocess.run([tool.path, "-res-usage", str(path)], capture_output=True, timeout=600, check=False)
    if done.returncode != 0:
        raise InputError(
            "compiler_tool_failed",
            f"cuobjdump -res-usage failed on {path}: {done.stderr.decode('utf-8', 'replace').strip()}",
            path=str(path),
            observed=f"exit status {done.returncode}",
        )
    return done.stdout.decode("utf-8", "replace"), tool


def _require_dir_or_file(path: Path) -> None:
    if not path.exists():
        raise InputError("file_not_found", f"{path}: no such file or folder", path=str(path))


def triton(
    path: str | os.PathLike[str], *, sass: bool = True, tool: SassTool = "nvdisasm"
) -> Parsed[TritonReport]:
    """Reads a Triton cache (its root, one kernel folder, or one metadata ``.json``).

    With ``sass`` the cubins are disassembled with ``tool`` (absent tool: ``ToolAbsentError``, exit 3).
    """
    root = Path(path)
    _require_dir_or_file(root)
    metas = _triton.find_metadata(root)
    if not metas:
        raise InputError(
            "triton_cache_empty",
            f"no Triton kernel metadata (a <name>.json with name and hash) under {root}",
            path=str(root),
            expected="a TRITON_CACHE_DIR, one of its hash folders, or a kernel's .json",
        )
    kernels, unmodeled, used_tool = _triton_kernels(metas, sass, tool)
    inputs = _identity_many(metas)
    return Parsed(TritonReport(root=str(root), kernels=kernels, tool=used_tool), unmodeled, inputs)


def _triton_kernels(
    metas: list[Path], sass: bool, tool: SassTool
) -> tuple[list[TritonKernel], list[UnmodeledItem], ToolIdentity | None]:
    from concurrent.futures import ThreadPoolExecutor

    unmodeled: list[UnmodeledItem] = []
    # Each kernel may run a disassembler (a subprocess): run them side by side, keep the input order.
    with ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1))) as pool:
        results = list(
            pool.map(
                lambda m: _triton.kernel(m, sass_tool=tool if sass else None, unmodeled=unmodeled), metas
            )
        )
    kernels = [k for k, _ in results]
    used_tool = next((t for _, t in results if t is not None), None)
    return kernels, unmodeled, used_tool


def _identity_many(paths: list[Path]) -> list[FileIdentity]:
    from gpuopt.provenance import file_identity

    return [file_identity(p) for p in paths]


def inductor(
    path: str | os.PathLike[str], *, sass: bool = True, tool: SassTool = "nvdisasm"
) -> Parsed[InductorReport]:
    """Reads a TorchInductor cache folder (``TORCHINDUCTOR_CACHE_DIR``) or one generated ``.py`` file."""
    from gpuopt.provenance import file_identity

    root = Path(path)
    _require_dir_or_file(root)
    folder = root.is_dir()  # anything else is read as one file (a FIFO or device answers not_a_file)
    files = sorted(p for p in root.rglob("*.py") if "triton" not in p.parts) if folder else [root]
    triton_metas = _triton.find_metadata(root / "triton") if folder and (root / "triton").is_dir() else []
    triton_kernels, unmodeled, used_tool = _triton_kernels(triton_metas, sass, tool)
    by_hash = {Path(k.cache_dir).name: k for k in triton_kernels}
    by_name: dict[str, list[TritonKernel]] = {}
    for k in triton_kernels:
        by_name.setdefault(k.name, []).append(k)
    outputs: list[InductorOutputCode] = []
    kernels: list[InductorKernel] = []
    for py in files:
        parsed = _inductor.parse_module(py)
        if isinstance(parsed, str):
            unmodeled.append(UnmodeledItem(kind="python_file", name=f"{py.name} ({parsed})", count=1))
            continue
        ident = file_identity(py)
        tree, text = parsed
        if (code := _inductor.output_code(tree, text, ident)) is not None:
            outputs.append(code)
        elif (kernel := _inductor.kernel_module(tree, ident)) is not None:
            kernels.append(_inductor.link_compiled(kernel, py.parent, by_hash, by_name))
        else:
            unmodeled.append(UnmodeledItem(kind="python_file", name=py.name, count=1))
    if folder:
        _inductor.note_pickles(root, unmodeled)
    if not outputs and not kernels:
        raise InputError(
            "inductor_nothing_found",
            f"no Inductor output code or generated kernel modules under {root}",
            path=str(root),
            expected="a TORCHINDUCTOR_CACHE_DIR, an output_code.py, or a generated kernel .py",
        )
    report = InductorReport(root=str(root), output_code=outputs, kernels=kernels, tool=used_tool)
    inputs = [c.file for c in outputs] + [k.file for k in kernels]
    return Parsed(report, unmodeled, inputs)


def table(report: BaseModel) -> pl.DataFrame:
    """One flat row per function (ptxas, res-usage) or kernel (Triton, Inductor)."""
    import polars as pl

    rows: list[dict[str, object]]
    if isinstance(report, (PtxasReport, ResUsageReport)):
        rows = [
            {
                **f.model_dump(exclude={"constant_bytes"}),
                "constant_bytes": sum(f.constant_bytes.values()) if f.constant_bytes else None,
            }
            for f in report.functions
        ]
    elif isinstance(report, TritonReport):
        rows = [_triton_row(k) for k in report.kernels]
    elif isinstance(report, InductorReport):
        rows = [_inductor_row(k) for k in report.kernels]
    else:
        raise TypeError(f"no table for {type(report).__name__}")
    return pl.DataFrame(rows, infer_schema_length=None)


def _triton_row(k: TritonKernel) -> dict[str, object]:
    sass = k.sass or []
    return {
        "name": k.name,
        "hash": k.hash,
        "arch": k.arch,
        "num_warps": k.num_warps,
        "num_stages": k.num_stages,
        "shared_bytes": k.shared_bytes,
        "stages": " ".join(s.stage for s in k.stages),
        "ptx_target": k.ptx_target,
        "sass_instructions": sum(f.instruction_count for f in sass) if sass else None,
        "registers": max((f.registers or 0 for f in sass), default=None) if sass else None,
        "signatures_found": " ".join(sorted({s for f in sass for s in f.signatures_found})) if sass else None,
    }


def _inductor_row(k: InductorKernel) -> dict[str, object]:
    t = k.triton
    return {
        "name": k.name,
        "heuristic": k.heuristic,
        "num_load": k.num_load,
        "num_store": k.num_store,
        "num_reduction": k.num_reduction,
        "best_config": None
        if k.best_config is None
        else ", ".join(f"{a}={b}" for a, b in k.best_config.items()),
        "triton_cache_hash": k.triton_cache_hash,
        "compiled": t is not None,
        "sass_instructions": sum(f.instruction_count for f in t.sass) if t and t.sass else None,
        "registers": max((f.registers or 0 for f in t.sass), default=None) if t and t.sass else None,
    }
