"""``cuobjdump -res-usage`` output: per function REG, STACK, SHARED, LOCAL, CONSTANT[B], TEXTURE, ...

For a fatbin or library each ELF image has its own ``Fatbin elf code:`` header (with ``arch = sm_NN``)
and ``Resource usage:`` block; for a bare cubin only the block is printed (no architecture).
"""

from __future__ import annotations

import re

from gpuopt.errors import FormatError
from gpuopt.models.compiler import ResUsageFunction
from gpuopt.models.envelope import UnmodeledItem

_FUNCTION = re.compile(r"^Function (.+):$")
_ITEM = re.compile(r"^([A-Z_]+)(?:\[(\d+)\])?:(\d+)$")
_KNOWN = {
    "REG": "registers",
    "STACK": "stack_bytes",
    "SHARED": "shared_bytes",
    "LOCAL": "local_bytes",
    "TEXTURE": "texture",
    "SURFACE": "surface",
    "SAMPLER": "sampler",
}
_HEADER = ("code version =", "host =", "compile_size =", "compressed", "ptxasOptions =", "identifier =")


def parse(text: str) -> tuple[list[ResUsageFunction], list[UnmodeledItem]]:
    functions: list[ResUsageFunction] = []
    unmodeled: dict[tuple[str, str], int] = {}
    arch: str | None = None
    cubin = -1
    in_ptx = False
    pending: str | None = None
    blocks = 0
    for raw in text.splitlines():
        line = raw.strip()
        if not line or set(line) == {"="} or line.startswith(_HEADER):
            continue
        if line in ("Fatbin elf code:", "Fatbin ptx code:"):
            in_ptx = line == "Fatbin ptx code:"
            arch = None
            continue
        if line.startswith("arch = "):
            if not in_ptx:
                arch = line.removeprefix("arch = ").strip()
            continue
        if line == "Resource usage:":
            blocks += 1
            cubin += 1
            continue
        if line == "Common:":
            continue
        if m := _FUNCTION.match(line):
            pending = m.group(1)
            continue
        items = [_ITEM.match(tok) for tok in line.split()]
        if items and all(items) and pending is not None:
            functions.append(_function(pending, arch, cubin, [m for m in items if m], unmodeled))
            pending = None
            continue
        if items and all(items) and pending is None:
            for m in items:
                if m is not None and m.group(1) != "GLOBAL":
                    key = ("res_usage_common", m.group(1))
                    unmodeled[key] = unmodeled.get(key, 0) + 1
            continue
        key = ("line", line.split(" ", 1)[0][:40])
        unmodeled[key] = unmodeled.get(key, 0) + 1
    if blocks == 0:
        raise FormatError(
            "format_invalid",
            "no `Resource usage:` block: this is not cuobjdump -res-usage output",
            expected="the output of `cuobjdump -res-usage`",
        )
    if pending is not None:
        raise FormatError(
            "file_truncated",
            f"the report ends before the resource line of function {pending}",
            expected="each `Function NAME:` line followed by its `REG:... STACK:...` line",
        )
    return functions, [UnmodeledItem(kind=k, name=n, count=c) for (k, n), c in sorted(unmodeled.items())]


def _function(
    name: str,
    arch: str | None,
    cubin: int,
    items: list[re.Match[str]],
    unmodeled: dict[tuple[str, str], int],
) -> ResUsageFunction:
    values: dict[str, int | None] = dict.fromkeys(_KNOWN.values())
    constant: dict[str, int] = {}
    for m in items:
        key, bank, value = m.group(1), m.group(2), int(m.group(3))
        if key == "CONSTANT" and bank is not None:
            constant[bank] = value
        elif key in _KNOWN:
            values[_KNOWN[key]] = value
        else:
            ukey = ("res_usage_item", key)
            unmodeled[ukey] = unmodeled.get(ukey, 0) + 1
    return ResUsageFunction(
        cubin_index=max(cubin, 0), arch=arch, function=name, constant_bytes=constant, **values
    )
