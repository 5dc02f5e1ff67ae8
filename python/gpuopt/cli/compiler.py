"""``gpuopt compiler ptxas|res-usage|triton|inductor PATH``: compiler reports and artifacts as facts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gpuopt._files import read_stream_bounded
from gpuopt.cli._output import Outcome, command
from gpuopt.cli._registry import Group
from gpuopt.cli._tables import render_frame

if TYPE_CHECKING:
    from gpuopt.compiler import Parsed

_SASS = click.option(
    "--sass/--no-sass",
    default=True,
    show_default=True,
    help="Disassemble each cubin for SASS facts (needs nvdisasm or cuobjdump; exit 3 when absent).",
)
_TOOL = click.option(
    "--tool",
    type=click.Choice(["nvdisasm", "cuobjdump"]),
    default="nvdisasm",
    show_default=True,
    help="Disassembler for cubins (nvdisasm also gives registers and frame size).",
)


def _outcome(parsed: Parsed[Any], header: str) -> Outcome:
    from gpuopt import compiler

    def render() -> str:
        return f"{header}\n{render_frame(compiler.table(parsed.report), 0)}"

    return Outcome(data=parsed.report, render=render, inputs=parsed.inputs, unmodeled=parsed.unmodeled)


@click.group(cls=Group)
def compiler() -> None:
    """Facts from compiler reports (ptxas -v, cuobjdump -res-usage) and caches (Triton, TorchInductor).

    Every fact names its stage (source, ttir, ttgir, llvm_ir, ptx, cubin, sass, metadata, report).
    Text in a stage proves only that the text is there: kernel and op names are not evidence of
    fusion or elimination.
    """


@compiler.command()
@click.argument(
    "path",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    help="A file holding ptxas -v output (a build log), or '-' for stdin.",
)
@command("gpuopt.compiler.ptxas/v1")
def ptxas(path: Path) -> Outcome:
    """Per function registers, barriers, stack frame, spills, smem/cmem from `ptxas -v` output.

    \b
    Examples:
      gpuopt compiler ptxas ptxas.txt
      nvcc -Xptxas -v -cubin k.cu 2> ptxas.txt && gpuopt compiler ptxas ptxas.txt
      nvcc -Xptxas -v -cubin k.cu 2>&1 | gpuopt compiler ptxas - --json
    """
    from gpuopt import compiler as lib

    source: Path | bytes = (
        read_stream_bounded(sys.stdin.buffer, "report on stdin") if str(path) == "-" else path
    )
    return _outcome(lib.ptxas(source), "stage: report (ptxas -v)")


@compiler.command("res-usage")
@click.argument(
    "path",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    help="cuobjdump -res-usage output (a text file, or '-' for stdin), or a binary it is run on.",
)
@command("gpuopt.compiler.res_usage/v1")
def res_usage(path: Path) -> Outcome:
    """Per function REG, STACK, SHARED, LOCAL, CONSTANT from `cuobjdump -res-usage` (text or a binary).

    \b
    Examples:
      gpuopt compiler res-usage kernels.cubin
      cuobjdump -res-usage libfoo.so > ru.txt && gpuopt compiler res-usage ru.txt --json
    """
    from gpuopt import compiler as lib

    source: Path | bytes = (
        read_stream_bounded(sys.stdin.buffer, "report on stdin") if str(path) == "-" else path
    )
    parsed = lib.res_usage(source)
    tool = parsed.report.tool
    via = f" via {tool.name} {tool.version}" if tool else ""
    return _outcome(parsed, f"stage: report (cuobjdump -res-usage{via})")


@compiler.command()
@click.argument(
    "path",
    type=click.Path(path_type=Path, exists=True),
    help="A TRITON_CACHE_DIR, one of its hash folders, or a kernel's metadata .json.",
)
@_SASS
@_TOOL
@command("gpuopt.compiler.triton/v1")
def triton(path: Path, sass: bool, tool: str) -> Outcome:
    """Kernels in a Triton cache: metadata, stage files, IR/PTX op counts, SASS facts of the cubin.

    PATH is a TRITON_CACHE_DIR, one of its hash folders, or a kernel's metadata .json.

    \b
    Examples:
      gpuopt compiler triton ~/.triton/cache
      gpuopt compiler triton ~/.triton/cache/VSJU.../mm.json --json | jq '.data.kernels[0].sass'
    """
    from gpuopt import compiler as lib

    return _outcome(lib.triton(path, sass=sass, tool=tool), "stages: metadata, ttgir, ptx, sass (cubin)")


@compiler.command()
@click.argument(
    "path",
    type=click.Path(path_type=Path, exists=True),
    help="A TORCHINDUCTOR_CACHE_DIR, or one generated .py (output code or a kernel module).",
)
@_SASS
@_TOOL
@command("gpuopt.compiler.inductor/v1")
def inductor(path: Path, sass: bool, tool: str) -> Outcome:
    """Generated kernels and launches in a TorchInductor cache or output code, with their Triton builds.

    PATH is a TORCHINDUCTOR_CACHE_DIR, or one generated .py (output code or a kernel module).
    Python files are parsed, never run; pickled cache entries are counted, never unpickled.

    \b
    Examples:
      gpuopt compiler inductor /tmp/torchinductor_$USER
      gpuopt compiler inductor output_code.py --json | jq '.data.output_code[0].launches'
    """
    from gpuopt import compiler as lib

    return _outcome(
        lib.inductor(path, sass=sass, tool=tool), "stage: source (generated code); sass from cached cubins"
    )
