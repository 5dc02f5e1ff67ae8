"""``gpuopt sass scan|functions|opcodes|signatures FILE``: facts from SASS listings and binaries.

Every command is its options and one call to :mod:`gpuopt.sass` (the table commands through
:func:`gpuopt.cli._table_command.table_command`), rendered by :mod:`gpuopt.cli._sass_render`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from gpuopt._files import read_stream_bounded
from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import count
from gpuopt.cli._registry import Group
from gpuopt.cli._sass_render import render_scan
from gpuopt.cli._table_command import table_command
from gpuopt.cli._tables import answered, table_options

_FILE = click.argument(
    "file",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    help="A SASS listing (cuobjdump -sass or nvdisasm output), '-' for one on stdin, or a binary (.cubin, "
    ".fatbin, .o, .so, executable) that is disassembled first.",
)
_TOOL = click.option(
    "--tool",
    type=click.Choice(["cuobjdump", "nvdisasm"]),
    default="cuobjdump",
    show_default=True,
    help="Disassembler for a binary input (nvdisasm reads cubins only).",
)
_CATALOG = click.option(
    "--catalog",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="A signature catalog to use instead of the built-in references/sass_signatures.json.",
)


@click.group(cls=Group)
def sass() -> None:
    """Facts from SASS: cuobjdump -sass / nvdisasm listings, or binaries run through them.

    FILE is a listing (text), '-' for a listing on stdin, or a binary (.cubin, .fatbin, .o, .so,
    executable) that is disassembled with cuobjdump (or --tool nvdisasm for a cubin); the tool's
    version and sha256 are recorded. Every fact is stage `sass`: it shows what instructions the code
    holds, not what runs or how fast.
    """


def _source(file: Path) -> Path | bytes:
    """FILE, or the listing read from stdin for ``-``."""
    if str(file) == "-":
        return read_stream_bounded(sys.stdin.buffer, "SASS listing on stdin")
    return file


@sass.command()
@_FILE
@_TOOL
@_CATALOG
@command("gpuopt.sass.scan/v1")
def scan(file: Path, tool: str, catalog: Path | None) -> Outcome:
    """Summarise a listing: architectures, functions, instructions, classes, signature totals.

    \b
    Examples:
      gpuopt sass scan kernels.cubin
      cuobjdump -sass libfoo.so > foo.sass && gpuopt sass scan foo.sass --json
    """
    from gpuopt import sass as lib

    answer = lib.scan_document(_source(file), tool=tool, catalog=catalog)
    return answered(answer, lambda: render_scan(answer.data))


@sass.command()
@_FILE
@_TOOL
@table_options
@command("gpuopt.sass.functions/v2")
def functions(file: Path, **options: Any) -> Outcome:
    """One row per function: instruction count (padding excluded), classes, registers where stated.

    Registers, frame and stack sizes come from nvdisasm listings (`.nv.info`); cuobjdump -sass does
    not print them (see `gpuopt compiler res-usage`).

    \b
    Examples:
      gpuopt sass functions kernels.cubin --tool nvdisasm
      gpuopt sass functions big.sass --limit 0 --out functions.parquet
    """
    return table_command("sass", "functions", _source(file), **options)


@sass.command()
@_FILE
@_TOOL
@click.option("--function", help="Only functions whose name contains this text.")
@table_options
@command("gpuopt.sass.opcodes/v2")
def opcodes(file: Path, **options: Any) -> Outcome:
    """The opcode histogram: one row per (function, full mnemonic with modifiers), with class and width.

    \b
    Examples:
      gpuopt sass opcodes kernels.cubin --function vec_add
    """
    return table_command("sass", "opcodes", _source(file), **options)


@sass.command()
@_FILE
@_TOOL
@_CATALOG
@click.option(
    "--status",
    type=click.Choice(["found", "missing", "not_applicable"]),
    multiple=True,
    help="Only rows with this status (repeatable).",
)
@click.option("--signature", "signatures", multiple=True, help="Only this catalog key (repeatable).")
@click.option(
    "--evidence",
    type=count(0),
    default=3,
    show_default=True,
    help="Evidence lines kept per pattern and function.",
)
@table_options
@command("gpuopt.sass.signatures/v2")
def signatures(file: Path, **options: Any) -> Outcome:
    """Catalog signatures per function: found / missing / not_applicable, with evidence lines.

    Patterns match parsed opcodes (base mnemonic + modifiers) only, never names or comments. A found
    signature shows the instructions are present; it does not show they run or matter.

    \b
    Examples:
      gpuopt sass signatures kernels.cubin --status found
      gpuopt sass signatures mm.cubin --signature hopper_warpgroup_mma --json
    """
    return table_command("sass", "signatures", _source(file), **options)
