"""``gpuopt sass scan|functions|opcodes|signatures FILE``: facts from SASS listings and binaries."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt._files import read_stream_bounded
from gpuopt.cli._output import Outcome, command
from gpuopt.cli._render import section, table
from gpuopt.cli._tables import for_people, render_frame, table_data, table_options, write_table

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.models.envelope import FileIdentity, UnmodeledItem
    from gpuopt.models.sass import SassScanReport
    from gpuopt.sass import SassScan

_FILE = click.argument("file", type=click.Path(path_type=Path, dir_okay=False, allow_dash=True))
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


def _scan(
    file: Path, tool: str, catalog: Path | None, evidence: int = 3
) -> tuple[SassScan, list[FileIdentity]]:
    from gpuopt import sass
    from gpuopt.provenance import file_identity

    if str(file) == "-":
        data = read_stream_bounded(sys.stdin.buffer, "SASS listing on stdin")
        return sass.scan(data, catalog=catalog, evidence_limit=evidence), []
    result = sass.scan(file, tool=tool, catalog=catalog, evidence_limit=evidence)
    inputs = [file_identity(file)]
    if catalog is not None:
        inputs.append(file_identity(catalog))
    return result, inputs


def _unmodeled(result: SassScan) -> list[UnmodeledItem]:
    return list(result.summary.unmodeled)


def _source_line(result: SassScan) -> str:
    src = result.source
    where = src.path or "(text)"
    if src.tool is not None:
        return (
            f"stage: sass  source: {where} via {src.tool.name} {src.tool.version} ({result.summary.dialect})"
        )
    return f"stage: sass  source: {where} ({result.summary.dialect} listing)"


def _table_outcome(
    name: str,
    frame: pl.DataFrame,
    result: SassScan,
    inputs: list[FileIdentity],
    limit: int,
    out: Path | None,
    shown: pl.DataFrame | None = None,
) -> Outcome:
    """The table in the envelope is ``frame``; people see ``shown`` (a compact form) when given."""
    from gpuopt.models.sass import SassTableData

    if out is not None:
        write_table(frame, out)
    base = table_data(name, frame, limit)
    data = SassTableData(stage="sass", source=result.source, table=base)
    header = _source_line(result)
    people = frame if shown is None else for_people(frame, shown)
    return Outcome(
        data=data,
        render=lambda: f"{header}\n{render_frame(people, limit)}",
        inputs=inputs,
        unmodeled=_unmodeled(result),
    )


def _compact_signatures(frame: pl.DataFrame) -> pl.DataFrame:
    """Evidence as `/*addr*/ text` lines, pattern lists joined: what fits on a screen."""
    import polars as pl

    def lines(items: list[dict[str, object]]) -> str:
        return "\n".join(f"/*{int(str(e['address'])):04x}*/ {e['text']}" for e in items)

    return frame.select(
        "function",
        "signature",
        "status",
        pl.col("matched_patterns").list.join(" "),
        pl.col("missing_patterns").list.join(" "),
        pl.col("evidence").map_elements(lines, return_dtype=pl.String),
    )


@click.group()
def sass() -> None:
    """Facts from SASS: cuobjdump -sass / nvdisasm listings, or binaries run through them.

    FILE is a listing (text), '-' for a listing on stdin, or a binary (.cubin, .fatbin, .o, .so,
    executable) that is disassembled with cuobjdump (or --tool nvdisasm for a cubin); the tool's
    version and sha256 are recorded. Every fact is stage `sass`: it shows what instructions the code
    holds, not what runs or how fast.
    """


def _render_scan(report: SassScanReport) -> str:
    s = report.summary
    src = report.source
    rows: list[tuple[str, object]] = [
        ("stage", s.stage),
        ("source", src.path or "(text)"),
        ("dialect", s.dialect),
    ]
    if src.tool is not None:
        rows.append(
            ("tool", f"{src.tool.name} {src.tool.version} ({src.tool.path}, sha256 {src.tool.sha256[:12]})")
        )
    rows += [
        ("architectures", ", ".join(s.architectures)),
        ("ptx architectures", ", ".join(s.ptx_architectures) or "none"),
        ("cubins", s.cubin_count),
        ("functions", s.function_count),
        ("instructions", f"{s.instruction_count} (+{s.padding_nop_count} padding NOPs)"),
        ("predicated", s.predicated_count),
        ("backward branches", s.backward_branch_count),
        ("distinct opcodes", s.distinct_opcode_count),
    ]
    classes = [[k, v] for k, v in s.class_counts.items() if v]
    sigs = [[t.signature, t.found, t.missing, t.not_applicable] for t in report.signatures]
    return "\n\n".join(
        [
            section("SASS listing", rows),
            "Instruction classes\n" + table(["class", "instructions"], classes),
            "Signatures (functions)\n" + table(["signature", "found", "missing", "n/a"], sigs),
        ]
    )


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
    result, inputs = _scan(file, tool, catalog)
    report = result.report()
    return Outcome(
        data=report, render=lambda: _render_scan(report), inputs=inputs, unmodeled=_unmodeled(result)
    )


@sass.command()
@_FILE
@_TOOL
@table_options
@command("gpuopt.sass.functions/v2")
def functions(file: Path, tool: str, limit: int, out: Path | None) -> Outcome:
    """One row per function: instruction count (padding excluded), classes, registers where stated.

    Registers, frame and stack sizes come from nvdisasm listings (`.nv.info`); cuobjdump -sass does
    not print them (see `gpuopt compiler res-usage`).

    \b
    Examples:
      gpuopt sass functions kernels.cubin --tool nvdisasm
      gpuopt sass functions big.sass --limit 0 --out functions.parquet
    """
    result, inputs = _scan(file, tool, None)
    outcome = _table_outcome("sass_functions", result.functions, result, inputs, limit, out)
    frame = result.functions
    if frame.height and "registers" in frame.columns and frame["registers"].null_count() == frame.height:
        table = outcome.render
        outcome.render = lambda: f"{table()}\n{_NO_REGISTERS}"
    return outcome


_NO_REGISTERS = (
    "(registers, frame and stack sizes: this listing does not state them (cuobjdump -sass prints none);\n"
    " an nvdisasm listing of the cubin (--tool nvdisasm) or `gpuopt compiler res-usage` gives them)"
)


@sass.command()
@_FILE
@_TOOL
@click.option("--function", "function_name", help="Only functions whose name contains this text.")
@table_options
@command("gpuopt.sass.opcodes/v2")
def opcodes(file: Path, tool: str, function_name: str | None, limit: int, out: Path | None) -> Outcome:
    """The opcode histogram: one row per (function, full mnemonic with modifiers), with class and width.

    \b
    Examples:
      gpuopt sass opcodes kernels.cubin --function vec_add
    """
    import polars as pl

    result, inputs = _scan(file, tool, None)
    frame = result.opcodes
    if function_name:
        frame = frame.filter(pl.col("function").str.contains(function_name, literal=True))
    frame = frame.sort(["function_index", "count", "opcode"], descending=[False, True, False])
    return _table_outcome("sass_opcodes", frame, result, inputs, limit, out)


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
@click.option("--signature", "keys", multiple=True, help="Only this catalog key (repeatable).")
@click.option(
    "--evidence",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Evidence lines kept per pattern and function.",
)
@table_options
@command("gpuopt.sass.signatures/v2")
def signatures(
    file: Path,
    tool: str,
    catalog: Path | None,
    status: tuple[str, ...],
    keys: tuple[str, ...],
    evidence: int,
    limit: int,
    out: Path | None,
) -> Outcome:
    """Catalog signatures per function: found / missing / not_applicable, with evidence lines.

    Patterns match parsed opcodes (base mnemonic + modifiers) only, never names or comments. A found
    signature shows the instructions are present; it does not show they run or matter.

    \b
    Examples:
      gpuopt sass signatures kernels.cubin --status found
      gpuopt sass signatures mm.cubin --signature hopper_warpgroup_mma --json
    """
    import polars as pl

    from gpuopt.errors import InputError

    result, inputs = _scan(file, tool, catalog, evidence)
    frame = result.signatures
    if keys:
        known = set(frame["signature"].unique().to_list())
        unknown = [k for k in keys if k not in known]
        if unknown:
            raise InputError(
                "sass_signature_unknown",
                f"no signature {', '.join(unknown)} in the catalog",
                expected=", ".join(sorted(known)),
            )
        frame = frame.filter(pl.col("signature").is_in(list(keys)))
    if status:
        frame = frame.filter(pl.col("status").is_in(list(status)))
    return _table_outcome(
        "sass_signatures", frame, result, inputs, limit, out, shown=_compact_signatures(frame)
    )
