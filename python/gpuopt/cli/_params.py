"""Click parameter types shared by commands.

``click.FloatRange`` lets ``nan`` through (every comparison with NaN is false) and ``inf`` through an
open-ended range; both then failed deep inside a model as an internal error. :class:`FiniteFloatRange`
answers them as a usage error (exit 2) like any other out-of-range value.

``click.File("rb")`` opens its file while the command line is parsed: a FIFO blocked there for ever and
``/dev/zero`` was read without end. :class:`RequestFile` reads nothing until the command asks, then
through ``gpuopt._files`` (regular files only, at most the request cap), so a bad path is the command's
typed error in its envelope.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import click

# What the positional arguments several commands share are: their --help and MCP tool schemas say it.
ROOT_ARGUMENT = "The artifact root: the folder gpuopt readiness check made for the Target."
NSYS_FILE = (
    "An Nsight Systems capture: an SQLite export (nsys export --type sqlite), or a .nsys-rep that is "
    "exported first when nsys is installed."
)
TORCH_PATH = "A PyTorch profiler (Kineto) trace, .json or .json.gz, or a folder of per-rank traces."
NCU_FILE = "An Nsight Compute report (.ncu-rep) or an ncu --csv export (raw or details page)."

#: The largest count an option takes: what the native code's 64-bit integers hold (a longer Python
#: integer was an OverflowError, exit 1, where the value is handed on).
COUNT_MAX = 2**63 - 1


class Count(click.IntRange):
    """A whole number from ``min`` up to :data:`COUNT_MAX`: larger is a usage error (exit 2) saying so;
    help shows only the lower bound (the upper is the machine's, not the option's)."""

    def __init__(self, low: int) -> None:
        super().__init__(min=low, max=COUNT_MAX)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.isascii():
            # Python's int() also reads other scripts' digits (full-width U+FF10..): not a number typed here.
            self.fail(f"{value!r} is not a whole number in ASCII digits", param, ctx)
        number = click.INT.convert(value, param, ctx)
        if number > COUNT_MAX:
            self.fail(f"{number} is larger than gpuopt takes (at most {COUNT_MAX})", param, ctx)
        return super().convert(number, param, ctx)

    def _describe_range(self) -> str:
        return f"x>={self.min}"


def count(low: int) -> Count:
    """A whole number from ``low`` up to :data:`COUNT_MAX` (see :class:`Count`)."""
    return Count(low)


class OutputPath(click.Path):
    """A file gpuopt writes (``--out``, ``--html``): a path ending with ``/`` names a folder, which
    pathlib (and so click's ``Path``) silently drops, writing ``x.parquet`` for ``x.parquet/``."""

    def __init__(self, *, dir_okay: bool) -> None:
        super().__init__(path_type=Path, dir_okay=dir_okay)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.endswith("/") and value.strip("/"):
            self.fail(f"{value!r} ends with '/', so it names a folder; gpuopt writes a file here", param, ctx)
        return super().convert(value, param, ctx)


def output_path(*, dir_okay: bool = False) -> OutputPath:
    """The type of an option naming a file gpuopt writes (see :class:`OutputPath`); ``dir_okay`` where
    the command itself names an existing folder given (``--html``: ``output_is_folder``)."""
    return OutputPath(dir_okay=dir_okay)


def check_outputs_are_not_inputs(kwargs: dict[str, Any]) -> None:
    """``output_is_input`` (exit 2) where a file the command writes (an :class:`OutputPath` option) is a
    file it reads (a path argument or option, a request file), through any name: a link or another path
    to the same file. Outputs are renamed over their path, so ``torch kernels t.json --out t.json``
    replaced the trace with its own table. Checked before the command reads anything."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return
    params = {p.name: p for p in ctx.command.params if p.name in kwargs}
    written = [kwargs[n] for n, p in params.items() if isinstance(p.type, OutputPath) and kwargs[n]]
    if not written:
        return
    from gpuopt._files import refuse_replacing_an_input

    read = [
        path
        for name, param in params.items()
        if isinstance(param.type, click.Path | RequestFile) and not isinstance(param.type, OutputPath)
        for path in _paths_named(kwargs[name] if isinstance(kwargs[name], list | tuple) else (kwargs[name],))
        if isinstance(path, str | Path) and str(path) not in ("", "-")
    ]
    for out in written:
        refuse_replacing_an_input(Path(out), read)


def _paths_named(values: Any) -> list[Any]:
    """The paths a path argument's values name: a request file's, a glob's matches (``'runs/*.json'``)."""
    from gpuopt import many
    from gpuopt.errors import GpuoptError

    out: list[Any] = []
    for item in values:
        item = item.name if isinstance(item, RequestSource) else item
        if isinstance(item, str | Path) and many.is_pattern(item):
            try:
                out.extend(many.expand([item]))
            except GpuoptError:  # no match: the command says so
                continue
        else:
            out.append(item)
    return out


#: Requests are small JSON documents; the evaluation layer caps them at the same size.
REQUEST_MAX_BYTES = 4 << 20


class RequestSource:
    """A request to read later: a path, or standard input for ``-``; ``read()`` is bounded."""

    def __init__(self, name: str) -> None:
        self.name = name

    def read(self) -> bytes:
        from gpuopt import _files

        if self.name == "-":
            return _files.read_stream_bounded(sys.stdin.buffer, "request", REQUEST_MAX_BYTES)
        return _files.read_bounded(Path(self.name), "request", REQUEST_MAX_BYTES)


class RequestFile(click.ParamType):  # type: ignore[type-arg]
    """A request JSON file or ``-`` for standard input, read when the command runs."""

    name = "file"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, RequestSource):
            return value
        return RequestSource(str(value))


class FiniteFloatRange(click.FloatRange):
    """A ``FloatRange`` that also rejects NaN and ±infinity."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{rv} is not a finite number.", param, ctx)
        return rv
