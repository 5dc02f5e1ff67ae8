"""TorchInductor caches and output code: generated Triton kernel modules (their decorator metadata and
``.best_config``), generated wrapper modules (kernels defined, calls made in ``call``), and the compiled
kernels in the cache's ``triton/`` folder.

Python files are read with :mod:`ast` (never imported or executed); pickled cache entries (``fxgraph``,
``aotautograd``) are counted as unmodeled and never unpickled.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any, Literal

from gpuopt._files import read_bounded
from gpuopt.errors import FormatError
from gpuopt.models.compiler import InductorKernel, InductorLaunch, InductorOutputCode, TritonKernel
from gpuopt.models.envelope import FileIdentity, UnmodeledItem

#: The largest generated Python source or ``.best_config`` read (the largest real output code is a few MB;
#: ``ast`` needs ~20x a source's size in memory).
MAX_SOURCE_BYTES = 64 * 1024 * 1024

_NODES = re.compile(r"#\s*Topologically Sorted Source Nodes:\s*\[(.*?)\](?:,\s*Original ATen:\s*\[(.*?)\])?")
_BEST_CONFIG_KEYS = (
    "XBLOCK",
    "YBLOCK",
    "ZBLOCK",
    "R0_BLOCK",
    "R1_BLOCK",
    "RBLOCK",
    "num_warps",
    "num_stages",
)


def _split(items: str | None) -> list[str]:
    return [s.strip() for s in items.split(",") if s.strip()] if items else []


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _dict_items(node: ast.expr | None) -> dict[str, ast.expr]:
    if not isinstance(node, ast.Dict):
        return {}
    out = {}
    for k, v in zip(node.keys, node.values, strict=False):
        key = _literal(k) if k is not None else None
        if isinstance(key, str):
            out[key] = v
    return out


def parse_module(path: Path) -> tuple[ast.Module, str] | str:
    """The syntax tree and text of a generated module, or why it cannot be parsed.

    A file that is not regular or is larger than :data:`MAX_SOURCE_BYTES` is an ``InputError``; one
    nested too deeply for :mod:`ast` (``RecursionError``, ``MemoryError``) is not parseable like a
    syntax error, never an internal error.
    """
    data = read_bounded(path, "Inductor source", MAX_SOURCE_BYTES)
    try:
        text = data.decode("utf-8")
        return ast.parse(text, filename=str(path)), text
    except (UnicodeDecodeError, SyntaxError, ValueError):
        return "not parseable"
    except (RecursionError, MemoryError):
        return "nested too deeply"


def kernel_module(tree: ast.Module, ident: FileIdentity) -> InductorKernel | None:
    """A generated Triton kernel module: one ``@triton.jit`` function with a heuristics decorator."""
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        names = [_dotted(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]
        if "triton.jit" not in names:
            continue
        heuristic = None
        kwargs: dict[str, ast.expr] = {}
        for d in node.decorator_list:
            dotted = _dotted(d.func) if isinstance(d, ast.Call) else None
            if isinstance(d, ast.Call) and dotted and dotted.startswith("triton_heuristics."):
                heuristic = dotted.removeprefix("triton_heuristics.")
                kwargs = {k.arg: k.value for k in d.keywords if k.arg}
        meta = _dict_items(kwargs.get("inductor_meta"))
        triton_meta = _dict_items(kwargs.get("triton_meta"))
        size_hints = _literal(kwargs.get("size_hints"))
        mutated = _literal(meta.get("mutated_arg_names"))
        return InductorKernel(
            name=str(_literal(meta.get("kernel_name")) or node.name),
            file=ident,
            heuristic=heuristic,
            size_hints={str(k): int(v) for k, v in size_hints.items() if isinstance(v, int)}
            if isinstance(size_hints, dict)
            else {},
            device_cc=_device_cc(triton_meta.get("device")),
            num_load=_opt_int(_literal(meta.get("num_load"))),
            num_store=_opt_int(_literal(meta.get("num_store"))),
            num_reduction=_opt_int(_literal(meta.get("num_reduction"))),
            mutated_arg_names=[str(m) for m in mutated] if isinstance(mutated, list) else [],
            best_config=None,
            triton_cache_hash=None,
            triton=None,
        )
    return None


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _device_cc(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.Call):
        for kw in node.keywords:
            if kw.arg == "cc":
                return _opt_int(_literal(kw.value))
    return None


def output_code(tree: ast.Module, text: str, ident: FileIdentity) -> InductorOutputCode | None:
    """A generated wrapper: ``NAME = async_compile.triton('NAME', ...)`` definitions and a ``call``."""
    defined: list[str] = []
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and (_dotted(node.value.func) or "").startswith("async_compile.")
        ):
            defined += [t.id for t in node.targets if isinstance(t, ast.Name)]
    call = next(
        (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "call"),
        None,
    )
    if call is None or not defined:
        return None
    lines = text.splitlines()
    launches: list[InductorLaunch] = []
    calls = sorted(
        (n for n in ast.walk(call) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset)
    )
    previous_line = call.lineno
    for call_node in calls:
        dotted = _dotted(call_node.func) or ""
        kind: Literal["triton", "extern", "aten"] | None = None
        name = dotted
        if dotted.endswith(".run") and dotted.removesuffix(".run") in defined:
            kind, name = "triton", dotted.removesuffix(".run")
        elif dotted.startswith("extern_kernels."):
            kind = "extern"
        elif dotted.startswith("torch.ops."):
            kind = "aten"
        if kind is None:
            continue
        nodes, aten = _comment_before(lines, previous_line, call_node.lineno)
        launches.append(
            InductorLaunch(
                order=len(launches),
                kind=kind,
                name=name,
                line=call_node.lineno,
                source_nodes=nodes,
                original_aten=aten,
            )
        )
        previous_line = call_node.lineno
    return InductorOutputCode(file=ident, kernels_defined=defined, launches=launches)


def _comment_before(lines: list[str], after: int, line: int) -> tuple[list[str], list[str]]:
    for text in reversed(lines[after : line - 1]):
        m = _NODES.search(text)
        if m:
            return _split(m.group(1)), _split(m.group(2))
    return [], []


def best_config(path: Path) -> dict[str, Any] | None:
    raw = read_bounded(path, "Inductor best_config", MAX_SOURCE_BYTES)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FormatError(
            "format_invalid", f"{path} is not a JSON best_config: {exc}", path=str(path)
        ) from exc
    except RecursionError:
        raise FormatError(
            "format_invalid", f"{path} is not a JSON best_config: nested too deeply", path=str(path)
        ) from None
    return data if isinstance(data, dict) else None


def link_compiled(
    kernel: InductorKernel,
    folder: Path,
    by_hash: dict[str, TritonKernel],
    by_name: dict[str, list[TritonKernel]],
) -> InductorKernel:
    """Attaches the ``.best_config`` beside the module and the compiled Triton kernel: the one the
    best_config's ``triton_cache_hash`` names, else the only cached kernel of that name (if just one)."""
    update: dict[str, Any] = {}
    for cfg_path in sorted(folder.glob("*.best_config")):
        cfg = best_config(cfg_path)
        if not cfg:
            continue
        update["best_config"] = {k: cfg[k] for k in (*_BEST_CONFIG_KEYS, "found_by_coordesc") if k in cfg}
        cache_hash = cfg.get("triton_cache_hash")
        if isinstance(cache_hash, str):
            update["triton_cache_hash"] = cache_hash
            if cache_hash in by_hash:
                update["triton"], update["triton_link"] = by_hash[cache_hash], "best_config_hash"
        break
    same_name = by_name.get(kernel.name, [])
    if "triton" not in update and len(same_name) == 1:
        update["triton"], update["triton_link"] = same_name[0], "only_kernel_of_that_name"
    update["triton_cache_entries_of_that_name"] = len(same_name)
    return kernel.model_copy(update=update)


def note_pickles(root: Path, unmodeled: list[UnmodeledItem]) -> None:
    for kind in ("fxgraph", "aotautograd"):
        folder = root / kind
        if folder.is_dir():
            count = sum(1 for p in folder.rglob("*") if p.is_file())
            if count:
                unmodeled.append(
                    UnmodeledItem(
                        kind="inductor_cache_entry", name=f"{kind} (pickled, not read)", count=count
                    )
                )
