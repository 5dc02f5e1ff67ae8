"""The page of an artifact root (``gpuopt report ROOT --html OUT``) or of one invocation: forest plots of
effects with their CIs against the minimum-effect band, the A/A noise and its MDE, per-case effects.

Every number comes from ``gpuopt.evaluation.views.report.build`` (the same structure ``report --format
json`` prints): a view of the records, never evidence. Effects are in % with > 0 meaning the candidate
is better, as the records state them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from gpuopt.evaluation import registry
from gpuopt.evaluation.views import report as views
from gpuopt.html.page import Page, plotly

OTHER_COLOR = "#B279A2"
NOTE = "A view of the records, never evidence. Effects in %, > 0: the candidate is better."


def _band(fig: Any, minimum: float | None) -> None:
    fig.add_vline(x=0, line={"color": "#333", "width": 1})
    if minimum:
        fig.add_vrect(
            x0=-minimum,
            x1=minimum,
            fillcolor="#DDDDDD",
            opacity=0.5,
            line_width=0,
            annotation_text=f"± minimum effect {minimum:g} %",
            annotation_position="top left",
        )


def _color(group: str) -> str:
    """A group is an operation: its colour in the operations registry."""
    verb = registry.find(group)
    return OTHER_COLOR if verb is None or verb.color is None else verb.color


def _forest(rows: list[dict[str, Any]], minimum: float | None, x_title: str) -> Any:
    """rows: label, estimate, low, high, group (colour), hover."""
    go = plotly()
    fig = go.Figure()
    for group in dict.fromkeys(r["group"] for r in rows):
        part = [r for r in rows if r["group"] == group]
        fig.add_trace(
            go.Scatter(
                x=[r["estimate"] for r in part],
                y=[r["label"] for r in part],
                mode="markers",
                name=group,
                marker={"color": _color(group), "size": 9},
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": [r["high"] - r["estimate"] for r in part],
                    "arrayminus": [r["estimate"] - r["low"] for r in part],
                    "thickness": 2,
                    "width": 5,
                },
                hovertext=[r["hover"] for r in part],
                hovertemplate="%{y}<br>%{x:.3g} %<br>%{hovertext}<extra></extra>",
            )
        )
    _band(fig, minimum)
    fig.update_layout(
        height=120 + 28 * len(rows),
        margin={"l": 10, "r": 10, "t": 30, "b": 40},
        xaxis={"title": {"text": x_title}, "zeroline": False},
        yaxis={
            "categoryorder": "array",
            "categoryarray": [r["label"] for r in rows],
            "autorange": "reversed",
        },
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
    )
    return fig


def _complete(row: dict[str, Any]) -> bool:
    return all(row.get(k) is not None for k in ("estimate", "low", "high"))


def _label(inv: dict[str, Any]) -> str:
    subject = inv.get("mechanism") or "original"
    return f"{inv['operation']} · {subject} · {inv['id'][:12]}"


def _minimum(details: dict[str, dict[str, Any]]) -> float | None:
    found = [
        views.statistic_facts(d["statistics"]["primary"])["threshold_pct"]
        for d in details.values()
        if d.get("statistics") and d["statistics"].get("primary")
    ]
    found += [d["resolution"]["minimum_effect_pct"] for d in details.values() if d.get("resolution")]
    return max(found) if found else None


def _aa_rows(details: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The A/A interval of each noise record's metrics (the original against itself)."""
    rows = []
    for inv_id, d in details.items():
        for metric, m in ((d.get("noise") or {}).get("metrics") or {}).items():
            rows.append(
                {
                    "label": f"noise (A/A) · {metric} · {inv_id[:12]}",
                    "estimate": m["aa_estimate_pct"],
                    "low": m["aa_ci_low_pct"],
                    "high": m["aa_ci_high_pct"],
                    "group": "noise",
                    "hover": f"A/A verdict {m['aa_verdict']}, {m['n_pairs']} pairs",
                }
            )
    return rows


def _hover(inv: dict[str, Any]) -> str:
    text = f"verdict {inv['verdict']} ({inv['primary_verdict']}), {inv['pairs_valid']} valid pairs"
    return text if inv.get("prediction") is None else f"{text}, prediction {inv['prediction']}"


def _effects_section(
    page: Page, invocations: list[dict[str, Any]], details: dict[str, dict[str, Any]], minimum: float | None
) -> None:
    rows = [
        {
            "label": _label(inv),
            "estimate": inv["estimate_pct"],
            "low": inv["ci_low_pct"],
            "high": inv["ci_high_pct"],
            "group": inv["operation"],
            "hover": _hover(inv),
        }
        for inv in invocations
    ]
    rows += _aa_rows(details)
    rows = [r for r in rows if _complete(r)]
    title = "Primary effect per invocation (estimate and CI)"
    if not rows:
        page.nothing("effects", title, "No completed invocation with a primary estimate in this root yet.")
        return
    note = f"{NOTE} Grey band: ± the minimum effect; noise rows are A/A (the original against itself)."
    page.figure("effects", title, _forest(rows, minimum, "primary effect (%)"), note)


def _noise_section(page: Page, details: dict[str, dict[str, Any]], minimum: float | None) -> None:
    go = plotly()
    fig = go.Figure()
    for inv_id, d in details.items():
        facts = (d.get("noise") or {}).get("metrics") or {}
        for metric, m in facts.items():
            at = sorted(m["at"], key=lambda a: a["n_pairs"])
            fig.add_trace(
                go.Scatter(
                    x=[a["n_pairs"] for a in at],
                    y=[a["mde_pct"] for a in at],
                    mode="lines+markers",
                    name=f"{metric} · {inv_id[:12]}",
                    hovertemplate="%{x} pairs: MDE %{y:.3g} %<extra></extra>",
                )
            )
    title = "A/A noise: minimum detectable effect by pairs"
    if not fig.data:
        page.nothing("noise", title, "No noise (A/A) result in this root yet.")
        return
    if minimum:
        fig.add_hline(y=minimum, line={"dash": "dash"}, annotation_text=f"minimum effect {minimum:g} %")
    fig.update_layout(
        height=320,
        margin={"l": 10, "r": 10, "t": 30, "b": 40},
        xaxis={"title": {"text": "pairs"}},
        yaxis={"title": {"text": "MDE (%)"}, "rangemode": "tozero"},
    )
    note = "From each noise record: the MDE (normal approximation) at n, the minimum pairs and 2n."
    page.figure("noise", title, fig, note)


def _cases_section(page: Page, details: dict[str, dict[str, Any]], minimum: float | None) -> None:
    rows = []
    for inv_id, d in details.items():
        for c in views.case_facts(d["statistics"]) if d.get("statistics") else []:
            rows.append(
                {
                    "label": f"{d['operation']} · {inv_id[:12]} · {c['case_id']}",
                    "estimate": c["estimate_pct"],
                    "low": c["ci_low_pct"],
                    "high": c["ci_high_pct"],
                    "group": d["operation"],
                    "hover": f"{c['n_valid']} valid pairs",
                }
            )
    rows = [r for r in rows if _complete(r)]
    title = "Per-case effects (reported, never used for verdicts)"
    if not rows:
        page.nothing("cases", title, "No per-case statistics in the records shown.")
        return
    page.figure("cases", title, _forest(rows, minimum, "effect in the case (%)"), NOTE)


def _metrics_section(page: Page, rep: dict[str, Any]) -> None:
    stats = rep.get("statistics") or {}
    found = [stats["primary"], *stats.get("secondary", [])] if stats.get("primary") else []
    metrics = [views.statistic_facts(s) for s in found]
    rows = [
        {
            "label": f"{s['metric']} ({s['role']})",
            "estimate": s["estimate_pct"],
            "low": s["ci_low_pct"],
            "high": s["ci_high_pct"],
            "group": rep["operation"],
            "hover": f"verdict {s['verdict']}, {s['n_valid']} valid pairs",
        }
        for s in metrics
    ]
    rows = [r for r in rows if _complete(r)]
    title = "Effects per metric (estimate and CI)"
    if not rows:
        why = "Performance not interpreted (invalid measurement)" if "statistics" in rep else "No statistics"
        page.nothing("effects", title, f"{why} in this invocation's records.")
        return
    minimum = metrics[0]["threshold_pct"]
    page.figure("effects", title, _forest(rows, minimum, "effect (%)"), NOTE)


def _tables(page: Page, rep: dict[str, Any]) -> None:
    """The report's own tables (its Markdown as HTML), below the plots."""
    body = views.to_html(views.markdown(rep)).split("<body>", 1)[1].rsplit("</body>", 1)[0]
    # The page has its own title and note: drop the Markdown's.
    body = re.sub(r"<h1>.*?</h1>|<p>_.*?_</p>", "", body)
    page.raw("Records", body)


def root_page(root: Path, out: Path) -> None:
    rep = views.build(root)
    t = rep["totals"]
    page = Page(title=f"gpuopt report — {rep['root']}")
    page.facts += [
        f"Target {rep['target']['id']}",
        f"{t['invocations']} invocations, {t['experiments']} Experiments, {t['gpu_seconds']:.3f} GPU-seconds",
        "A view of the records, never evidence.",
    ]
    page.facts += [
        f"prediction check of target {p['invocation_id'][:12]} ({p['mechanism']}): {p['text']}"
        for p in rep["predictions"]
        if p["status"] in ("observed_above", "observed_below")
    ]
    completed = [r for r in rep["invocations"] if r["state"] == "completed"]
    details = {r["id"]: views.build(root, r["id"]) for r in completed}
    minimum = _minimum(details)
    _effects_section(page, rep["invocations"], details, minimum)
    _noise_section(page, details, minimum)
    _cases_section(page, details, minimum)
    _tables(page, rep)
    page.write(out)


def invocation_page(root: Path, inv_id: str, out: Path) -> None:
    rep = views.build(root, inv_id)
    page = Page(title=f"gpuopt report — {rep['operation']} {inv_id}")
    plan = rep["plan"]
    page.facts += [
        f"plan: cases {', '.join(plan['case_ids'])}, pairs {plan['pairs']}, seed {plan['seed']}",
        "A view of the records, never evidence.",
    ]
    if "status" in rep:
        page.facts.append(f"status: {rep['status']['state']} (no result yet)")
    else:
        page.facts.append(
            f"outcome: {rep['execution_status']} / {rep['measurement_validity']} / {rep['verdict']}"
        )
    if rep.get("prediction"):
        page.facts.append(f"prediction check: {rep['prediction']['text']}")
    details = {inv_id: rep}
    minimum = _minimum(details)
    if rep["operation"] == "noise":
        _noise_section(page, details, minimum)
    elif rep["operation"] != "baseline":
        _metrics_section(page, rep)
        _cases_section(page, details, minimum)
    _tables(page, rep)
    page.write(out)
