"""Triton cache folders: per compiled kernel the metadata JSON, the stage files beside it, facts from
their text, and SASS facts from the cubin (through nvdisasm or cuobjdump).

A kernel is a ``<name>.json`` holding ``name`` and ``hash``; its stages are ``<name>.<suffix>`` in
the same folder (``__grp__<name>.json`` lists them too).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpuopt._files import read_bounded
from gpuopt.errors import InputError
from gpuopt.models.compiler import SassFunctionFacts, Stage, StageFile, TritonKernel
from gpuopt.models.doctor import ToolIdentity
from gpuopt.models.envelope import UnmodeledItem

from . import ir

# Real metadata is a few KiB; a cap keeps a hostile file from filling memory.
_MAX_METADATA_BYTES = 16 * 1024 * 1024

# Suffix -> stage, in compile order. `.source` is Triton's first MLIR (before TTIR passes).
SUFFIXES: tuple[tuple[str, Stage], ...] = (
    ("source", "source"),
    ("ttir", "ttir"),
    ("ttgir", "ttgir"),
    ("llir", "llvm_ir"),
    ("ptx", "ptx"),
    ("cubin", "cubin"),
)
_MODELED_METADATA = {
    "name",
    "hash",
    "target",
    "num_warps",
    "num_ctas",
    "num_stages",
    "shared",
    "triton_version",
    "backend_name",
    "arch",
}


def find_metadata(root: Path) -> list[Path]:
    """Kernel metadata files under ``root`` (a cache root, one kernel folder, or one .json).

    A ``.json`` that cannot be read or parsed fails closed (``triton_metadata_invalid``): skipping it
    would drop a kernel without a word. A well-formed JSON without ``name`` and ``hash`` is not a
    kernel's metadata and is passed over.
    """
    candidates = [root] if root.is_file() else sorted(root.rglob("*.json"))
    found = []
    for path in candidates:
        if path.name.startswith("__grp__") or path.suffix != ".json":
            continue
        meta = _load(path)
        if isinstance(meta, dict) and "name" in meta and "hash" in meta:
            found.append(path)
    return found


def _load(path: Path) -> Any:
    data = read_bounded(path, "Triton metadata JSON", _MAX_METADATA_BYTES)
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        detail = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InputError(
            "triton_metadata_invalid",
            f"{path} is not valid JSON ({detail}): the kernel it describes cannot be read",
            path=str(path),
            expected="Triton kernel metadata JSON (an object with name and hash)",
            observed=f"{len(data)} bytes" if data else "an empty file",
        ) from None


_INT_LIMIT = 1 << 31  # warps, CTAs, stages, shared bytes: far below it on every GPU


def _int(meta: dict[str, Any], key: str) -> int | None:
    """A modeled whole number: absent or null is None; anything but 0 <= n < 2^31 is refused by
    :func:`_check` first."""
    value = meta.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _check(meta: dict[str, Any], path: Path) -> None:
    """The modeled fields have their types (a field of the wrong type was read as absent or as text):
    ``name`` a plain file-name stem (it names the stage files beside the metadata), ``hash`` text,
    ``target`` an object, the counts whole numbers in range. The value itself is never repeated."""

    def bad(key: str, expected: str) -> InputError:
        return InputError(
            "triton_metadata_invalid",
            f"{path}: field {key!r} does not hold {expected}",
            path=str(path),
            expected=f"{key}: {expected}",
            observed=type(meta.get(key)).__name__,
        )

    name = meta.get("name")
    if not isinstance(name, str) or not name or name in (".", "..") or any(c in name for c in "/\\\0"):
        raise bad("name", "a kernel name (text, no path separators)")
    if not isinstance(meta.get("hash"), str):
        raise bad("hash", "text")
    if "target" in meta and meta["target"] is not None and not isinstance(meta["target"], dict):
        raise bad("target", "an object (backend, arch)")
    for key in ("num_warps", "num_ctas", "num_stages", "shared"):
        value = meta.get(key)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < _INT_LIMIT:
            raise bad(key, "a whole number from 0 below 2^31")


def kernel(
    meta_path: Path, *, sass_tool: str | None, unmodeled: list[UnmodeledItem]
) -> tuple[TritonKernel, ToolIdentity | None]:
    from gpuopt.provenance import file_identity

    meta = _load(meta_path)
    if not isinstance(meta, dict):
        raise InputError("triton_metadata_invalid", f"{meta_path} is not a JSON object", path=str(meta_path))
    _check(meta, meta_path)
    name = str(meta["name"])
    folder = meta_path.parent
    stages: list[StageFile] = []
    missing: list[str] = []
    texts: dict[str, str] = {}
    for suffix, stage in SUFFIXES:
        path = folder / f"{name}.{suffix}"
        if not path.is_file():
            missing.append(stage)
            continue
        ident = file_identity(path)
        stages.append(
            StageFile(stage=stage, path=str(path), size_bytes=ident.size_bytes, blake3=ident.blake3)
        )
        if stage != "cubin":
            texts[stage] = read_bounded(path, f"Triton {stage} file").decode("utf-8", errors="replace")
    for other in sorted(folder.glob(f"{name}.*")):
        if other.suffix.lstrip(".") not in {s for s, _ in SUFFIXES} | {"json"}:
            unmodeled.append(UnmodeledItem(kind="triton_stage_file", name=other.name, count=1))
    ops = []
    mlir_stages: tuple[Stage, ...] = ("source", "ttir", "ttgir")
    for stage in mlir_stages:
        if stage in texts:
            ops += ir.mlir_ops(texts[stage], stage)
    if "llvm_ir" in texts:
        ops += ir.llvm_intrinsics(texts["llvm_ir"])
    ptx_version = ptx_target = None
    if "ptx" in texts:
        ptx_version, ptx_target = ir.ptx_header(texts["ptx"])
        ops += ir.ptx_ops(texts["ptx"])
    sass, tool = None, None
    cubin = folder / f"{name}.cubin"
    if sass_tool is not None and cubin.is_file():
        sass, tool = sass_facts(cubin, sass_tool)
    target = meta.get("target") if isinstance(meta.get("target"), dict) else {}
    arch = target.get("arch") if isinstance(target, dict) else None
    return (
        TritonKernel(
            name=name,
            cache_dir=str(folder),
            hash=str(meta["hash"]),
            backend=str(target.get("backend"))
            if isinstance(target, dict) and target.get("backend")
            else None,
            arch=None if arch is None else str(arch),
            num_warps=_int(meta, "num_warps"),
            num_ctas=_int(meta, "num_ctas"),
            num_stages=_int(meta, "num_stages"),
            shared_bytes=_int(meta, "shared"),
            triton_version=str(meta["triton_version"]) if meta.get("triton_version") else None,
            stages=stages,
            missing_stages=missing,
            module_attributes=ir.module_attributes(texts.get("ttgir", "")),
            ptx_target=ptx_target,
            ptx_version=ptx_version,
            ops=ops,
            sass=sass,
            unmodeled_metadata=sorted(k for k in meta if k not in _MODELED_METADATA),
        ),
        tool,
    )


def sass_facts(cubin: Path, tool: str) -> tuple[list[SassFunctionFacts], ToolIdentity | None]:
    """Per-function SASS facts of one cubin, through ``gpuopt.sass.scan``."""
    import polars as pl

    from gpuopt import sass

    scan = sass.scan(cubin, tool=tool)
    found = (
        scan.signatures.filter(pl.col("status") == "found")
        .group_by("function_index", maintain_order=True)
        .agg(pl.col("signature"))
    )
    found_by_fn = {row["function_index"]: row["signature"] for row in found.to_dicts()}
    class_cols = [c for c in scan.functions.columns if c.endswith("_count") and c not in _NOT_CLASSES]
    facts = []
    for row in scan.functions.to_dicts():
        facts.append(
            SassFunctionFacts(
                function=row["function"],
                arch=row["arch"],
                instruction_count=row["instruction_count"],
                registers=row["registers"],
                frame_size_bytes=row["frame_size_bytes"],
                class_counts={c.removesuffix("_count"): row[c] for c in class_cols if row[c]},
                signatures_found=found_by_fn.get(row["function_index"], []),
            )
        )
    return facts, scan.source.tool


_NOT_CLASSES = {
    "instruction_count",
    "padding_nop_count",
    "predicated_count",
    "backward_branch_count",
    "line_info_count",
    "distinct_opcode_count",
}
