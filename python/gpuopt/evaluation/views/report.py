"""``gpuopt report``: a view of a root or of one invocation, as Markdown, HTML or JSON (spec §3.8).

Per root: invocations with progress and verdicts, Experiments by mechanism with their verdicts and rejection
scope, the Champion history, totals. Per invocation: plan and progress, primary / constraint / guardrail /
secondary statistics with CIs, per-case effects, pairs, resolution against the MDE, contamination and
GPU-seconds. Reports are views, never evidence.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from gpuopt._effects import effect
from gpuopt.errors import InputError
from gpuopt.evaluation import champion, invocation
from gpuopt.evaluation.capture import citations
from gpuopt.evaluation.views import prediction
from gpuopt.evaluation.views.listing import ls
from gpuopt.evaluation.views.output import write_text
from gpuopt.evaluation.views.records import Root, ci, pct
from gpuopt.models.evaluation.capture import CaptureDiffCitation
from gpuopt.models.evaluation.views import ReportData


def _table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    def cell(v: Any) -> str:
        if v is None:
            return "—"
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v).replace("|", "\\|")

    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return out


def _predictions(root: Root, invocations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The prediction check of every completed target, as facts and a sentence."""
    found = [
        prediction.of_result(root, r["id"])
        for r in invocations
        if r["operation"] == "target" and r["state"] == "completed"
    ]
    return [p.as_dict() | {"short": p.short()} for p in found if p is not None]


def _root_report(root: Root) -> dict[str, Any]:
    invocations = ls(root.store.root, "invocations").to_dicts() if root.ids("invocation") else []
    experiments = ls(root.store.root, "experiments").to_dicts() if root.ids("experiment") else []
    history = champion.history(root.store.root, include_orphans=True)
    gpu_seconds = sum(r.get("gpu_seconds") or 0.0 for r in invocations)
    predictions = _predictions(root, invocations)
    short = {p["invocation_id"]: p["short"] for p in predictions}
    for r in invocations:
        r["prediction"] = short.get(r["id"])
    return {
        "scope": "root",
        "root": str(root.store.root),
        "target": root.target_ref.model_dump(),
        "invocations": invocations,
        "predictions": predictions,
        "experiments": experiments,
        "champion_history": history.model_dump(mode="json")["entries"],
        "totals": {
            "invocations": len(invocations),
            "experiments": len(experiments),
            "gpu_seconds": gpu_seconds,
            "calls_gpus": len(root.target.gpus),
        },
    }


def _invocation_report(root: Root, inv_id: str) -> dict[str, Any]:
    request = root.request(inv_id)
    found = root.result(inv_id)
    result = None if found is None else found[0]
    out: dict[str, Any] = {
        "scope": "invocation",
        "invocation_id": inv_id,
        "operation": request.operation,
        "plan": request.plan.model_dump(),
        "calls_planned": len(request.evidence_plan),
        "result_sha256": None if found is None else found[1],
    }
    if result is None:
        out["status"] = invocation.status(root.store.root, inv_id).model_dump(mode="json")
        return out
    data = result.model_dump(mode="json")
    for key in (
        "execution_status",
        "measurement_validity",
        "verdict",
        "stop_reason",
        "cleanup_status",
        "calls",
        "gpu_seconds",
        "gpu_seconds_held",
        "elapsed_s",
        "warnings",
    ):
        out[key] = data.get(key)
    for key in (
        "statistics",
        "pairs",
        "resolution",
        "contamination",
        "noise",
        "cases",
        "prediction_check",
        "capture",
        "captures",
    ):
        if key in data:
            out[key] = data[key]
    checked = prediction.of_result(root, inv_id)
    if checked is not None:
        out["prediction"] = checked.as_dict() | {"short": checked.short()}
    cited = citations.for_result(root.store, inv_id)
    if cited:
        out["capture_diffs"] = [{**c.model_dump(mode="json"), "sha256": sha} for c, sha in cited]
    return out


def build(root_path: str | Path, rid: str | None = None) -> dict[str, Any]:
    root = Root.open(root_path)
    if rid is None:
        return _root_report(root)
    if not rid.startswith("inv-"):
        raise InputError("field_invalid", "report takes an invocation id", path="id", observed=rid)
    return _invocation_report(root, rid)


def _constraint_row(c: dict[str, Any]) -> list[Any]:
    if "limit" in c:  # v2: the engine's ConstraintResult (relative limits: regression in %)
        low, high = c["regression_ci_low"], c["regression_ci_high"]
        limit = c["limit"].get("max_regression_pct")
        return [c["metric"], limit, c["status"], pct(c["regression_estimate"]), ci(low, high)]
    low, high = c["regression_ci_low_pct"], c["regression_ci_high_pct"]  # v1: the twin's fields
    estimate = pct(c["regression_estimate_pct"])
    return [c["metric"], c["max_regression_pct"], c["status"], estimate, ci(low, high)]


def statistic_facts(s: dict[str, Any]) -> dict[str, Any]:
    """One metric of a result's statistics under the v2 twin's names, whatever the format: v3 embeds the
    engine's comparison (``n`` is ``n_valid``, ``minimum_effect_pct`` is ``threshold_pct``)."""
    c = s.get("comparison")
    if c is None:  # v1, v2: the comparison's fields copied into the statistic
        return s
    renamed = {"n_valid": c["n"], "threshold_pct": c["minimum_effect_pct"]}
    return {**c, "role": s["role"], "n_invalid": s["n_invalid"], **renamed}


def case_facts(stats: dict[str, Any]) -> list[dict[str, Any]]:
    """The primary's per-case effects, each with ``n_valid``: v3 reads them from the primary's comparison."""
    if "per_case" in stats:  # v1, v2: twins of the engine's case effects
        return list(stats["per_case"])
    return [{**c, "n_valid": c["n"]} for c in stats["primary"]["comparison"]["per_case"]]


def _effect(metric: dict[str, Any], value: float | None) -> str:
    """An estimate, with the factor beside it past 2x where the metric's effect is a log ratio."""
    return effect(value) if metric.get("effect_scale") == "log_ratio" else pct(value)


def _stat_rows(stats: dict[str, Any]) -> list[str]:
    p = statistic_facts(stats["primary"])
    lines = ["### Primary and secondary metrics", ""]
    rows = [
        [
            s["metric"],
            s["role"],
            s["verdict"],
            _effect(s, s["estimate_pct"]),
            ci(s["ci_low_pct"], s["ci_high_pct"]),
            s["n_valid"],
            s["threshold_pct"],
        ]
        for s in [p, *map(statistic_facts, stats["secondary"])]
    ]
    lines += _table(["metric", "role", "verdict", "estimate", "CI", "valid pairs", "threshold %"], rows)
    if stats["constraints"]:
        lines += ["", "### Constraints", ""]
        lines += _table(
            ["metric", "max regression %", "status", "regression", "CI"],
            [_constraint_row(c) for c in stats["constraints"]],
        )
    if stats["guardrails"]:
        lines += ["", "### Guardrails", ""]
        lines += _table(
            ["metric", "op", "limit", "mode", "status", "violations"],
            [
                [r["metric"], r["op"], r["limit"], r["mode"], r["status"], len(g["violations"])]
                for g in stats["guardrails"]
                for r in [g.get("result", g)]  # v2 embeds the engine's result; v1 copied its fields
            ],
        )
    cases = case_facts(stats)
    if cases:
        lines += ["", "### Per case (reported, never used for verdicts)", ""]
        lines += _table(
            ["case", "valid pairs", "estimate", "CI"],
            [
                [
                    c["case_id"],
                    c["n_valid"],
                    _effect(p, c["estimate_pct"]),
                    ci(c["ci_low_pct"], c["ci_high_pct"]),
                ]
                for c in cases
            ],
        )
    return lines


def _cited_md(cited: list[dict[str, Any]]) -> list[str]:
    """The capture diffs a result cites, one line each (beside the statistics above them)."""
    if not cited:
        return []
    lines = ["", "### Capture diffs cited by this result", ""]
    for c in cited:
        model = CaptureDiffCitation.model_validate({k: v for k, v in c.items() if k != "sha256"})
        lines.append(f"- {citations.line(model)} [{c['id']}, sha256 {c['sha256']}]")
    return lines


def _captures_md(rep: dict[str, Any]) -> list[str]:
    """A capture invocation's profiler and one row per capture (use them as cap:ID/VARIANT)."""
    if not rep.get("captures"):
        return []
    settings = rep["capture"]
    profiler = settings["profiler"]
    tool = settings["tool"] if profiler is None else f"{profiler['path']} {profiler['version'] or ''}".strip()
    lines = ["", f"### Captures ({tool}; `cap:{rep['invocation_id']}/VARIANT` in gpuopt profile diff)", ""]
    rows = [
        [
            c["index"], c["variant"], c["case_id"], c["repeat"], c["status"], c["reason"],
            ", ".join(f"{a['kind']} {a['sha256'][:12]}" for a in c["artifacts"]) or None,
            None if c["facts"] is None else c["facts"]["events"],
            None if c["facts"] is None else c["facts"]["total_ns"],
        ]
        for c in rep["captures"]
    ]  # fmt: skip
    header = ["capture", "variant", "case", "repeat", "status", "reason", "artifacts", "kernels", "kernel ns"]
    return lines + _table(header, rows)


def _invocation_md(rep: dict[str, Any]) -> list[str]:
    lines = [
        f"# Report — {rep['operation']} {rep['invocation_id']}",
        "",
        "_A view of the records, never evidence._",
        "",
    ]
    plan = rep["plan"]
    lines += [
        f"- plan: cases {', '.join(plan['case_ids'])}, pairs {plan['pairs']}, calls per case "
        f"{plan['calls_per_case']}, samples {plan['samples_per_call']}, warmup {plan['warmup_per_call']}, "
        f"seed {plan['seed']}, {plan['lifecycle']}",
    ]
    if "status" in rep:
        st = rep["status"]
        lines.append(f"- status: {st['state']}, calls {st['calls']['completed']}/{st['calls']['planned']}")
        return lines
    calls = rep["calls"]
    lines += [
        f"- outcome: {rep['execution_status']} / {rep['measurement_validity']} / **{rep['verdict']}** "
        f"(stop {rep['stop_reason']}), cleanup {rep['cleanup_status']}",
        f"- calls: {calls['completed']} of {calls['planned']} ran, {len(calls['skipped'])} skipped",
        f"- GPU-seconds: {rep['gpu_seconds']:.3f} in calls, {rep['gpu_seconds_held']:.3f} held; "
        f"elapsed {rep['elapsed_s']:.1f} s",
    ]
    contamination = rep.get("contamination")
    if contamination is not None:
        lines.append(
            f"- contamination: checked {str(contamination['checked']).lower()} "
            f"(sampler {contamination['sampler']}), {contamination['pairs_invalid']} pairs invalidated"
        )
    res = rep.get("resolution")
    if res is not None:
        mde = "—" if res["mde_pct"] is None else f"{res['mde_pct']:.3g} %"
        lines.append(
            f"- resolution: {res['status']} — MDE {mde} at {res['planned_pairs']} planned pairs vs minimum "
            f"effect {res['minimum_effect_pct']:g} %"
        )
    if rep.get("prediction"):
        lines.append(f"- prediction check: **{rep['prediction']['short']}** — {rep['prediction']['text']}")
    if rep.get("statistics"):
        lines += ["", *_stat_rows(rep["statistics"])]
    elif "statistics" in rep:
        lines += ["", "Performance not interpreted: the measurement is invalid."]
    lines += _cited_md(rep.get("capture_diffs") or [])
    lines += _captures_md(rep)
    if rep.get("pairs"):
        lines += ["", "### Pairs", ""]
        rows = []
        for p in rep["pairs"]:
            for metric, v in p["values"].items():
                rows.append(
                    [p["pair_index"], p["case_id"], p["order"], metric, v["reference"], v["candidate"],
                     p["effects_log"].get(metric), p["valid"], ",".join(p["invalid_reasons"])]
                )  # fmt: skip
        lines += _table(
            ["pair", "case", "order", "metric", "reference", "candidate", "effect (log)", "valid", "invalid"],
            rows,
        )
    if rep.get("cases"):
        lines += ["", "### Cases", ""]
        rows = [
            [c["case_id"], c["calls"], m, v["median"], v["min"], v["max"], v["within_call_cv_median"]]
            for c in rep["cases"]
            for m, v in c["metrics"].items()
        ]
        lines += _table(["case", "calls", "metric", "median", "min", "max", "within-call CV"], rows)
    if rep.get("warnings"):
        lines += ["", "### Warnings", ""] + [f"- {w['code']}: {w['message']}" for w in rep["warnings"]]
    return lines


def _pairs(r: dict[str, Any]) -> str | None:
    if r["pairs_valid"] is None:
        return None
    return f"{r['pairs_valid']}/{r['pairs_valid'] + r['pairs_invalid']}"


def _root_md(rep: dict[str, Any]) -> list[str]:
    t = rep["totals"]
    lines = [
        f"# Report — {rep['root']}",
        "",
        "_A view of the records, never evidence._",
        "",
        f"- Target {rep['target']['id']}",
        f"- {t['invocations']} invocations, {t['experiments']} Experiments, "
        f"{t['gpu_seconds']:.3f} GPU-seconds",
        "",
        "## Invocations",
        "",
    ]
    lines += _table(
        ["invocation", "operation", "state", "verdict", "stop", "primary", "estimate", "CI", "prediction",
         "pairs", "GPU-s"],
        [
            [r["id"], r["operation"], r["state"], r["verdict"], r["stop_reason"], r["primary_verdict"],
             pct(r["estimate_pct"]), ci(r["ci_low_pct"], r["ci_high_pct"]), r["prediction"],
             _pairs(r),
             r["gpu_seconds"]]
            for r in rep["invocations"]
        ],
    )  # fmt: skip
    lines += ["", "## Prediction checks (observed effect against each Experiment's claim)", ""]
    if not rep["predictions"]:
        lines.append("No target result yet.")
    lines += [f"- target {p['invocation_id']} ({p['mechanism']}): {p['text']}" for p in rep["predictions"]]
    lines += ["", "## Experiments by mechanism", ""]
    lines += _table(
        ["mechanism", "experiment", "rejection scope", "screen", "target"],
        [
            [r["mechanism"], r["id"], r["rejection_scope"], r["screen_verdict"], r["target_verdict"]]
            for r in sorted(rep["experiments"], key=lambda r: str(r["mechanism"]))
        ],
    )
    lines += ["", "## Champion history", ""]
    if not rep["champion_history"]:
        lines.append("The original (nothing selected).")
    lines += _table(
        ["selection", "decision", "result", "verdict", "estimate", "CI", "orphan"],
        [
            [e["selection"]["id"], e["decision"], e["result"]["invocation_id"], e["verdict"],
             pct(e["estimate_pct"]), ci(e["ci_low_pct"], e["ci_high_pct"]), e["orphan"]]
            for e in rep["champion_history"]
        ],
    )  # fmt: skip
    return lines


def markdown(rep: dict[str, Any]) -> str:
    lines = _invocation_md(rep) if rep["scope"] == "invocation" else _root_md(rep)
    return "\n".join(lines) + "\n"


def _html_row(line: str, first: bool) -> str:
    cells = [c.strip() for c in line.strip("|").split(" | ")]
    tag = "th" if first else "td"
    return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>"


def _is_rule(line: str) -> bool:
    return all(set(c) <= {"-"} for c in line.strip("|").split("|"))


def to_html(md: str) -> str:
    """The report's own Markdown (headings, lists, tables, paragraphs) as a standalone HTML page."""
    body: list[str] = []
    block: str | None = None  # "table" or "list" while one is open
    for raw in md.splitlines():
        line = raw.rstrip()
        kind = "table" if line.startswith("|") else "list" if line.startswith("- ") else None
        if block is not None and kind != block:
            body.append("</table>" if block == "table" else "</ul>")
            block = None
        if kind == "table":
            if _is_rule(line):
                continue
            body.append(("<table>" if block is None else "") + _html_row(line, block is None))
            block = "table"
        elif kind == "list":
            body.append(("<ul>" if block is None else "") + f"<li>{html.escape(line[2:])}</li>")
            block = "list"
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{html.escape(line[level:].strip())}</h{level}>")
        elif len(line) > 2 and line[0] == line[-1] == "_":  # a whole line in emphasis
            body.append(f"<p><em>{html.escape(line[1:-1])}</em></p>")
        elif line:
            body.append(f"<p>{html.escape(line)}</p>")
    if block is not None:
        body.append("</table>" if block == "table" else "</ul>")
    return (
        "<!doctype html>\n<html><head><meta charset='utf-8'><title>gpuopt report</title>"
        "<style>table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px}</style>"
        "</head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def report(
    root_path: str | Path, rid: str | None = None, *, fmt: str = "md", out: str | Path | None = None
) -> ReportData:
    if fmt not in ("md", "json"):
        raise InputError(
            "format_unknown",
            f"unknown report format {fmt!r}",
            expected="md or json (the HTML page: gpuopt.html.evaluation, or report --html OUT)",
        )
    rep = build(root_path, rid)
    scope = str(root_path) if rid is None else rid
    if fmt == "json":
        if out is not None:
            import json

            write_text(Path(out), json.dumps(rep, indent=2) + "\n")
        return ReportData(
            format="json", scope=scope, out=None if out is None else str(out), text=None, report=rep
        )
    text = markdown(rep)
    if out is not None:
        write_text(Path(out), text)
    return ReportData(
        format="md",
        scope=scope,
        out=None if out is None else str(out),
        text=text if out is None else None,
        report=None,
    )
