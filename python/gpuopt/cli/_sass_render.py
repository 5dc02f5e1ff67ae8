"""Human rendering of the ``gpuopt sass`` documents: the scan summary and the tables (the JSON carries the
same, uncompacted)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuopt.cli import _views
from gpuopt.cli._render import section, table
from gpuopt.cli._tables import for_people, render_frame

if TYPE_CHECKING:
    from gpuopt.answer import Answer
    from gpuopt.models.sass import SassScanReport, SassTableData
    from gpuopt.sass import SassScan

_NO_REGISTERS = (
    "(registers, frame and stack sizes: this listing does not state them (cuobjdump -sass prints none);\n"
    " an nvdisasm listing of the cubin (--tool nvdisasm) or `gpuopt compiler res-usage` gives them)"
)


def _source_line(result: SassScan) -> str:
    """The listing's source for people, its path cut in the middle so the line fits 120 columns (--json has
    it whole)."""
    from gpuopt.cli._people import shorten

    src = result.source
    tail = (
        f" via {src.tool.name} {src.tool.version} ({result.summary.dialect})"
        if src.tool is not None
        else f" ({result.summary.dialect} listing)"
    )
    head = "stage: sass  source: "
    return head + shorten(src.path or "(text)", 120 - len(head) - len(tail)) + tail


def render_table(answer: Answer[Any], limit: int) -> str:
    """A table with the line naming its source; signatures compacted (evidence as `/*addr*/ text`
    lines), functions with a note when the listing states no registers."""
    d: SassTableData = answer.data
    frame = answer.table
    people = (
        for_people(frame, _views.compact_signatures(frame)) if d.table.name == "sass_signatures" else frame
    )
    text = f"{_source_line(answer.source)}\n{render_frame(people, limit)}"
    if d.table.name == "sass_functions" and _views.all_null(frame, "registers"):
        text += f"\n{_NO_REGISTERS}"
    return text


def render_scan(report: SassScanReport) -> str:
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
