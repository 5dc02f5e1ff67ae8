"""Facts read from the text of compiler stages: MLIR op histograms (Triton source/TTIR/TTGIR), TTGIR
module attributes, PTX header and instruction histogram, LLVM IR intrinsic calls.

These are facts about text: an op in TTGIR shows the op is in that module, not what the hardware runs.
"""

from __future__ import annotations

import re
from collections import Counter

from gpuopt.models.compiler import OpCount, Stage

_MLIR_OP = re.compile(r'^(?:%[^=]+=\s*)?"?([a-z_][a-z0-9_]*\.[a-z_][\w.]*)"?[\s(<{:]')
_MODULE_ATTRS = re.compile(r"^module attributes \{(.*)\}\s*\{?\s*$")
_ATTR = re.compile(r'"?([\w.\-]+)"?\s*=\s*("[^"]*"|[^,]+)')
_PTX_OP = re.compile(r"^(?:@!?%\w+\s+)?([a-z][a-z0-9_]*(?:\.[\w:]+)*)(?:\s|;|$)")
_LLVM_CALL = re.compile(r"\bcall\b.*?@(llvm\.[\w.]+)\(")


def mlir_ops(text: str, stage: Stage) -> list[OpCount]:
    counts: Counter[str] = Counter()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "//", "}", "loc(")):
            continue
        m = _MLIR_OP.match(line + " ")
        if m:
            counts[m.group(1)] += 1
    return _sorted(counts, stage)


def module_attributes(text: str) -> dict[str, str]:
    for raw in text.splitlines():
        m = _MODULE_ATTRS.match(raw.strip())
        if m:
            # `"ttg.num-warps" = 8 : i32` -> "8": the value without its MLIR type.
            return {k: v.split(" : ")[0].strip().strip('"') for k, v in _ATTR.findall(m.group(1))}
    return {}


def ptx_header(text: str) -> tuple[str | None, str | None]:
    version = target = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(".version "):
            version = line.split()[1]
        elif line.startswith(".target "):
            target = line.split()[1].rstrip(",")
        if version and target:
            break
    return version, target


def ptx_ops(text: str) -> list[OpCount]:
    counts: Counter[str] = Counter()
    depth = 0
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if depth > 0 and not line.startswith((".", "$", "{", "}")) and not line.endswith(":"):
            m = _PTX_OP.match(line)
            if m:
                counts[m.group(1)] += 1
        depth += line.count("{") - line.count("}")
    return _sorted(counts, "ptx")


def llvm_intrinsics(text: str) -> list[OpCount]:
    counts: Counter[str] = Counter(m.group(1) for m in _LLVM_CALL.finditer(text))
    return _sorted(counts, "llvm_ir")


def _sorted(counts: Counter[str], stage: Stage) -> list[OpCount]:
    return [
        OpCount(stage=stage, op=op, count=n)
        for op, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
