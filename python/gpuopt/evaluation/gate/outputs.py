"""What a check shows where CI shows it: lines for people, a Markdown summary (GitHub's job summary reads
``$GITHUB_STEP_SUMMARY``), and JUnit XML for test-report panes. Each cites the records it used (Target,
baseline, every attempt's result, by id and sha256)."""

from __future__ import annotations

import os
from pathlib import Path
from xml.etree import ElementTree as ET

from gpuopt._files import check_output, write_output
from gpuopt.errors import InputError
from gpuopt.models.evaluation.gate import GateReason
from gpuopt.models.gate import GateCheckData, GateOutputs

FAILING = ("regression", "identity_mismatch", "correctness_failed")


def _primary(data: GateCheckData) -> str | None:
    result = data.result
    if result is None:
        return None
    if result.statistics is not None:
        c = result.statistics.primary.comparison
        if c.estimate_pct is None or c.ci_low_pct is None or c.ci_high_pct is None:
            return f"{c.metric}: no interval ({c.n} valid pairs)"
        return (
            f"{c.metric}: effect {c.estimate_pct:+.2f} % [{c.ci_low_pct:+.2f}, {c.ci_high_pct:+.2f}] over "
            f"{c.n} valid pairs (> 0 = current code better)"
        )
    return None


def _resolution(data: GateCheckData) -> str | None:
    """The minimum effect against the MDE the Target's noise record projects at the planned pairs."""
    res = None if data.result is None else data.result.resolution
    if res is None or res.noise_ref is None or res.mde_pct is None:
        return None if res is None else "no noise record of this plan's lifecycle and samples per call"
    return (
        f"{res.status}: MDE {res.mde_pct:.1f} % at {res.planned_pairs} planned pairs (noise "
        f"{res.noise_ref.invocation_id}) vs minimum effect {res.minimum_effect_pct:g} %"
    )


def _records(data: GateCheckData) -> list[str]:
    out = [f"Target {data.target.id} (sha256 {data.target.sha256})"]
    if data.baseline is not None:
        out.append(f"baseline {data.baseline_name} = {data.baseline.id} (sha256 {data.baseline.sha256})")
    if data.champion is not None:
        out.append(f"Champion selection {data.champion.id} (sha256 {data.champion.sha256})")
    for a in data.attempts:
        ref = "no result" if a.result is None else f"sha256 {a.result.sha256}"
        out.append(f"result {a.invocation_id} ({ref}){' (deduplicated)' if a.deduplicated else ''}")
    return out


def summary_lines(data: GateCheckData) -> list[str]:
    """One line per fact, for people (the CLI prints them; Markdown and JUnit say the same)."""
    lines = [f"gate {data.outcome} (exit {data.exit_code}), mode {data.mode}"]
    primary = _primary(data)
    if primary is not None:
        lines.append(f"primary {primary}")
    if data.result is not None:
        j = data.result.judgment
        lines.append(
            f"minimum effect {j.minimum_effect_pct:g} %: regression at effect <= "
            f"{j.regression_bound_pct:+.2f} %, improvement at >= {j.improvement_bound_pct:+.2f} %"
        )
        resolution = _resolution(data)
        if resolution is not None:
            lines.append(f"resolution {resolution}")
        c = data.result.contamination
        lines.append(
            "contamination: "
            + (
                f"checked ({c.sampler}), {max(c.pairs_invalid, c.calls_contaminated)} voided"
                if c.checked
                else f"not checked (sampler {c.sampler})"
            )
        )
    lines += [f"- {r.message}" for r in data.reasons]
    lines += [f"differs: {d.name}: {d.baseline} -> {d.current}" for d in data.identity_differences]
    lines += [f"cites {r}" for r in _records(data)]
    return lines


def _status(reason: GateReason, inconclusive_fails: bool) -> str:
    if reason.outcome in FAILING or (reason.outcome == "inconclusive" and inconclusive_fails):
        return "failure"
    if reason.outcome == "invalid":
        return "error"
    if reason.outcome == "inconclusive":
        return "skipped"
    return "passed"


def markdown(data: GateCheckData) -> str:
    """The Markdown summary of a check."""
    out = [f"## gpuopt gate: {data.outcome.upper()} (exit {data.exit_code})", ""]
    rows = [
        ("outcome", f"**{data.outcome}**"),
        ("compared with", data.against + (f" `{data.baseline_name}`" if data.baseline_name else "")),
        ("mode", data.mode),
        ("current code", f"`{data.candidate_digest[:16]}`" if data.candidate_digest else "—"),
    ]
    primary = _primary(data)
    if primary is not None:
        rows.append(("primary", primary))
    if data.result is not None:
        j = data.result.judgment
        rows.append(("minimum effect", f"{j.minimum_effect_pct:g} %"))
        resolution = _resolution(data)
        if resolution is not None:
            rows.append(("resolution", resolution))
        c = data.result.contamination
        rows.append(
            (
                "contamination",
                f"checked ({c.sampler}): {max(c.pairs_invalid, c.calls_contaminated)} voided, by rule "
                f"{c.by_rule or '{}'}"
                if c.checked
                else f"not checked (sampler {c.sampler})",
            )
        )
    rows.append(("attempts", f"{len(data.attempts)} (retry budget {data.retry_budget})"))
    out += ["| | |", "|---|---|", *[f"| {k} | {_cell(v)} |" for k, v in rows], ""]
    if data.reasons:
        out += ["### Why", ""]
        out += [
            f"- `{r.code}`{' → ' + r.outcome if r.outcome else ''}: {_cell(r.message)}" for r in data.reasons
        ]
        out.append("")
    if data.identity_differences:
        out += ["### Runtime facts that differ", "", "| fact | baseline | now |", "|---|---|---|"]
        out += [
            f"| {d.name} | {_cell(str(d.baseline))} | {_cell(str(d.current))} |"
            for d in data.identity_differences
        ]
        out.append("")
    if data.captures is not None and data.captures.flagged:
        out += ["### Flagged keys", "", "| key | change % | interval % | q | |", "|---|---|---|---|---|"]
        for f in data.captures.flagged:
            out.append(
                f"| {_cell(f.key)} | {_num(f.change_pct)} | [{_num(f.ci_low_pct)}, {_num(f.ci_high_pct)}] | "
                f"{_num(f.q_value)} | {f.direction} |"
            )
        out.append("")
    out += ["### Records", "", *[f"- {r}" for r in _records(data)], ""]
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f}"


def junit(data: GateCheckData) -> str:
    """JUnit XML: one test case per deciding fact (a failure for a regression or a mismatch, an error for an
    invalid measurement, skipped or failed for inconclusive as configured)."""
    inconclusive_fails = data.outcome != "inconclusive" or data.exit_code != 0
    deciding = [r for r in data.reasons if r.outcome is not None] or [
        GateReason(code=data.outcome, outcome=data.outcome, message=f"gate {data.outcome}")
    ]
    statuses = [_status(r, inconclusive_fails) for r in deciding]
    counts = {k: statuses.count(k) for k in ("failure", "error", "skipped")}
    elapsed = sum(0.0 if a.elapsed_s is None else a.elapsed_s for a in data.attempts)
    suites = ET.Element(
        "testsuites",
        name="gpuopt gate",
        tests=str(len(deciding)),
        failures=str(counts["failure"]),
        errors=str(counts["error"]),
        time=f"{elapsed:.3f}",
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"gpuopt gate {data.baseline_name or data.against}",
        tests=str(len(deciding)),
        failures=str(counts["failure"]),
        errors=str(counts["error"]),
        skipped=str(counts["skipped"]),
        time=f"{elapsed:.3f}",
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("outcome", data.outcome),
        ("exit_code", str(data.exit_code)),
        ("mode", data.mode),
        *((f"record.{i}", r) for i, r in enumerate(_records(data))),
    ):
        ET.SubElement(props, "property", name=name, value=value)
    for reason, status in zip(deciding, statuses, strict=True):
        where = " ".join(x for x in (reason.metric, reason.case_id) if x)
        case = ET.SubElement(
            suite,
            "testcase",
            classname="gpuopt.gate",
            name=f"{reason.code}{' ' + where if where else ''}",
            time="0",
        )
        if status in ("failure", "error"):
            ET.SubElement(
                case, status, type=str(reason.outcome), message=reason.message
            ).text = reason.message
        elif status == "skipped":
            ET.SubElement(case, "skipped", message=reason.message)
    ET.SubElement(suite, "system-out").text = "\n".join(data.summary)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _append(path: Path, text: str) -> None:
    """Appends to ``$GITHUB_STEP_SUMMARY``: a regular file or a new one (a FIFO there blocked the check
    until killed; a device or a store's record is refused as any output is)."""
    check_output(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(text + "\n")
    except OSError as exc:
        raise InputError(
            "output_unwritable", f"cannot append to {path}: {exc.strerror or exc}", path=str(path)
        ) from None


def write(
    data: GateCheckData, *, markdown_path: Path | None, junit_path: Path | None, step_summary: Path | None
) -> GateCheckData:
    """Writes the asked outputs and returns the data naming them."""
    text = markdown(data) if (markdown_path or step_summary) else ""
    if markdown_path is not None:
        write_output(markdown_path, text.encode("utf-8"))
    if step_summary is not None:
        _append(step_summary, text)
    if junit_path is not None:
        write_output(junit_path, junit(data).encode("utf-8"))
    outputs = GateOutputs(
        markdown=None if markdown_path is None else str(markdown_path),
        step_summary=None if step_summary is None else str(step_summary),
        junit=None if junit_path is None else str(junit_path),
    )
    return data.model_copy(update={"outputs": outputs})
