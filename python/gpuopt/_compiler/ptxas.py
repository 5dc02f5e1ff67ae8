"""``ptxas -v`` / ``nvcc -Xptxas -v`` output: per function registers, barriers, stack, spills, smem, cmem.

The lines, as CUDA 11-13 print them::

    ptxas info    : 0 bytes gmem
    ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'
    ptxas info    : Function properties for _Z3fooPf
        256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 32 registers, used 0 barriers, 256 bytes cumulative stack size
    ptxas info    : Compile time = 57.237 ms

Older toolkits also print ``N bytes smem`` and ``N bytes cmem[B]`` on the ``Used`` line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuopt._compiler._text import complete_lines, count, truncation
from gpuopt.errors import FormatError
from gpuopt.models.compiler import CompilerMessage, PtxasFunction, PtxasReport
from gpuopt.models.envelope import UnmodeledItem

_PREFIX = re.compile(r"^ptxas\s+(info|warning|error|fatal)\s*:\s?(.*)$")
_COMPILING = re.compile(r"^Compiling (entry )?function '([^']+)' for '([^']+)'")
_PROPERTIES = re.compile(r"^Function properties for (\S+)")
_FRAME = re.compile(r"^(-?\d+) bytes stack frame, (-?\d+) bytes spill stores, (-?\d+) bytes spill loads$")
_USED_ITEM = re.compile(
    r"^(?:[Uu]sed (-?\d+) registers|used (-?\d+) barriers|(-?\d+) bytes smem|(-?\d+) bytes cmem\[(\d+)\]"
    r"|(-?\d+) bytes cumulative stack size|(-?\d+) bytes lmem)$"
)
_GMEM = re.compile(r"^(\d+) bytes gmem(?:, .*)?$")
_TIME = re.compile(r"^Compile time = ([\d.]+) ms$")


@dataclass
class _Fn:
    target: str | None
    function: str
    kind: str
    values: dict[str, int | float | None] = field(default_factory=dict)
    constant: dict[str, int] = field(default_factory=dict)
    used_seen: bool = False

    def model(self) -> PtxasFunction:
        v = self.values
        return PtxasFunction(
            target=self.target,
            function=self.function,
            kind="entry" if self.kind == "entry" else "function",
            registers=_int(v.get("registers")),
            barriers=_int(v.get("barriers")),
            stack_frame_bytes=_int(v.get("stack_frame_bytes")),
            spill_store_bytes=_int(v.get("spill_store_bytes")),
            spill_load_bytes=_int(v.get("spill_load_bytes")),
            cumulative_stack_bytes=_int(v.get("cumulative_stack_bytes")),
            shared_bytes=_int(v.get("shared_bytes")),
            constant_bytes=self.constant,
            compile_time_ms=None if v.get("compile_time_ms") is None else float(v["compile_time_ms"] or 0),
        )


def _int(value: int | float | None) -> int | None:
    return None if value is None else int(value)


class _Parser:
    def __init__(self) -> None:
        self.functions: dict[tuple[str | None, str], _Fn] = {}
        self.current: _Fn | None = None  # the function `Used`/`Compile time` lines belong to
        self.properties: _Fn | None = None  # the function a frame line belongs to
        self.target: str | None = None
        self.gmem: list[int] = []
        self.messages: list[CompilerMessage] = []
        self.unmodeled: dict[tuple[str, str], int] = {}
        self.ptxas_lines = 0

    def _fn(self, name: str, kind: str) -> _Fn:
        key = (self.target, name)
        if key not in self.functions:
            self.functions[key] = _Fn(self.target, name, kind)
        fn = self.functions[key]
        if kind == "entry":
            fn.kind = "entry"
        return fn

    def line(self, raw: str) -> None:
        text = raw.strip()
        if not text:
            return
        frame = _FRAME.match(text)
        if frame and self.properties is not None:
            v = self.properties.values
            names = ("stack_frame_bytes", "spill_store_bytes", "spill_load_bytes")
            for name, number in zip(names, frame.groups(), strict=True):
                v[name] = count(number, name)
            return
        m = _PREFIX.match(text)
        if not m:
            key = ("line", text.split(" ", 1)[0][:40])
            self.unmodeled[key] = self.unmodeled.get(key, 0) + 1
            return
        self.ptxas_lines += 1
        level, body = m.group(1), m.group(2).strip()
        if level == "info" and self._info(body):
            return
        self.messages.append(CompilerMessage(level=level, text=body))

    def _info(self, body: str) -> bool:
        if m := _COMPILING.match(body):
            self.target = m.group(3)
            self.current = self._fn(m.group(2), "entry" if m.group(1) else "function")
            self.properties = None
            return True
        if m := _PROPERTIES.match(body):
            self.properties = self._fn(m.group(1), "function")
            return True
        if m := _GMEM.match(body):
            self.gmem.append(int(m.group(1)))
            return True
        if m := _TIME.match(body):
            if self.current is not None:
                self.current.values["compile_time_ms"] = float(m.group(1))
            return True
        if body.startswith(("Used ", "used ")) and self.current is not None:
            return self._used(body, self.current)
        return False

    def _used(self, body: str, fn: _Fn) -> bool:
        for item in (p.strip() for p in body.split(",")):
            m = _USED_ITEM.match(item)
            if not m:
                key = ("ptxas_used_item", re.sub(r"\d+", "N", item)[:60])
                self.unmodeled[key] = self.unmodeled.get(key, 0) + 1
                continue
            regs, bars, smem, cmem, bank, cumulative, lmem = m.groups()
            if regs is not None:
                fn.values["registers"] = count(regs, "registers")
            elif bars is not None:
                fn.values["barriers"] = count(bars, "barriers")
            elif smem is not None:
                fn.values["shared_bytes"] = count(smem, "shared_bytes")
            elif cmem is not None:
                fn.constant[bank] = count(cmem, f"cmem[{bank}] bytes")
            elif cumulative is not None:
                fn.values["cumulative_stack_bytes"] = count(cumulative, "cumulative_stack_bytes")
            else:
                count(lmem, "lmem bytes")
                key = ("ptxas_used_item", "N bytes lmem")
                self.unmodeled[key] = self.unmodeled.get(key, 0) + 1
        fn.used_seen = True
        return True


def parse(text: str) -> tuple[PtxasReport, list[UnmodeledItem]]:
    """Parses the text of a ``ptxas -v`` report; raises FormatError when it is not one or is cut off."""
    parser = _Parser()
    lines, cut = complete_lines(text)
    for raw in lines:
        parser.line(raw)
    if parser.ptxas_lines == 0:
        raise FormatError(
            "format_invalid",
            "no `ptxas info` lines: this is not ptxas -v output",
            expected="the stderr of `ptxas -v` or `nvcc -Xptxas -v`",
        )
    unfinished = [f.function for f in parser.functions.values() if f.kind == "entry" and not f.used_seen]
    if unfinished:
        raise FormatError(
            "file_truncated",
            f"the report ends before the `Used N registers` line of {unfinished[-1]}",
            expected="each `Compiling entry function` followed by its `Used N registers` line",
        )
    timed = [f for f in parser.functions.values() if f.values.get("compile_time_ms") is not None]
    last = parser.current
    if timed and last is not None and last.values.get("compile_time_ms") is None:
        # ptxas ends every function it compiled with `Compile time`; the last one lacks it.
        cut.append(truncation(f"ends before the `Compile time` line of {last.function}"))
    report = PtxasReport(
        functions=[f.model() for f in parser.functions.values()],
        global_bytes=parser.gmem,
        messages=parser.messages,
    )
    unmodeled = [UnmodeledItem(kind=k, name=n, count=c) for (k, n), c in sorted(parser.unmodeled.items())]
    return report, cut + unmodeled
