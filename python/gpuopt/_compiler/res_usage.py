"""``cuobjdump -res-usage`` output: per function REG, STACK, SHARED, LOCAL, CONSTANT[B], TEXTURE, ...

For a fatbin or library each ELF image has its own ``Fatbin elf code:`` header (with ``arch = sm_NN``)
and ``Resource usage:`` block; for a bare cubin only the block is printed (no architecture).
"""

from __future__ import annotations

import re

from gpuopt._compiler._text import complete_lines, count
from gpuopt.errors import FormatError
from gpuopt.models.compiler import ResUsageFunction
from gpuopt.models.envelope import UnmodeledItem

_FUNCTION = re.compile(r"^Function (.+):$")
_ITEM = re.compile(r"^([A-Z_]+)(?:\[(\d+)\])?:(-?\d+)$")
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


class _Parser:
    def __init__(self) -> None:
        self.functions: list[ResUsageFunction] = []
        self.unmodeled: dict[tuple[str, str], int] = {}
        self.arch: str | None = None
        self.cubin = -1
        self.in_ptx = False
        self.pending: str | None = None
        self.blocks = 0

    def note(self, kind: str, name: str) -> None:
        self.unmodeled[(kind, name)] = self.unmodeled.get((kind, name), 0) + 1

    def header(self, line: str) -> bool:
        """Fatbin headers and block titles; True when the line was one."""
        if not line or set(line) == {"="} or line.startswith(_HEADER) or line == "Common:":
            return True
        if line in ("Fatbin elf code:", "Fatbin ptx code:"):
            self.in_ptx, self.arch = line == "Fatbin ptx code:", None
            return True
        if line.startswith("arch = "):
            if not self.in_ptx:
                self.arch = line.removeprefix("arch = ").strip()
            return True
        if line == "Resource usage:":
            self.blocks += 1
            self.cubin += 1
            return True
        return False

    def line(self, raw: str) -> None:
        line = raw.strip()
        if self.header(line):
            return
        if m := _FUNCTION.match(line):
            self.pending = m.group(1)
            return
        items = [_ITEM.match(tok) for tok in line.split()]
        matched = [m for m in items if m is not None]
        if not items or len(matched) != len(items):
            self.note("line", line.split(" ", 1)[0][:40])
        elif self.pending is not None:
            self.functions.append(self.function(self.pending, matched))
            self.pending = None
        else:
            for m in matched:
                if m.group(1) != "GLOBAL":
                    self.note("res_usage_common", m.group(1))

    def function(self, name: str, items: list[re.Match[str]]) -> ResUsageFunction:
        values: dict[str, int | None] = dict.fromkeys(_KNOWN.values())
        constant: dict[str, int] = {}
        seen: set[tuple[str, str | None]] = set()
        for m in items:
            key, bank = m.group(1), m.group(2)
            if (key, bank) in seen:  # which one cuobjdump meant cannot be told: never the last silently
                raise FormatError(
                    "format_invalid",
                    f"function {name[:80]} lists {key}{'' if bank is None else f'[{bank}]'} twice",
                    expected="each resource once per function line, as cuobjdump writes it",
                    observed=f"{key} repeated",
                )
            seen.add((key, bank))
            value = count(m.group(3), _KNOWN.get(key, f"{key} bytes"))
            if key == "CONSTANT" and bank is not None:
                constant[bank] = value
            elif key in _KNOWN:
                values[_KNOWN[key]] = value
            else:
                self.note("res_usage_item", key)
        return ResUsageFunction(
            cubin_index=max(self.cubin, 0), arch=self.arch, function=name, constant_bytes=constant, **values
        )


def parse(text: str) -> tuple[list[ResUsageFunction], list[UnmodeledItem]]:
    parser = _Parser()
    lines, cut = complete_lines(text)
    for raw in lines:
        parser.line(raw)
    if parser.blocks == 0:
        raise FormatError(
            "format_invalid",
            "no `Resource usage:` block: this is not cuobjdump -res-usage output",
            expected="the output of `cuobjdump -res-usage`",
        )
    if parser.pending is not None:
        raise FormatError(
            "file_truncated",
            f"the report ends before the resource line of function {parser.pending}",
            expected="each `Function NAME:` line followed by its `REG:... STACK:...` line",
        )
    unmodeled = [UnmodeledItem(kind=k, name=n, count=c) for (k, n), c in sorted(parser.unmodeled.items())]
    return parser.functions, cut + unmodeled
