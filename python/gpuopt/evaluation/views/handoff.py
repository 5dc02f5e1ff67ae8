"""``gpuopt handoff``: a Markdown draft of the handoff notes, generated only from records (spec §3.8).

Every fact cites the record it comes from (``[id, sha256 …]``); the conclusion, the stop reason, open risks
and next directions are left as ``TO COMPLETE`` placeholders: they are the author's to write. gpuopt never
reads the file back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuopt._effects import effect
from gpuopt.evaluation import invocation, records
from gpuopt.evaluation.capture import citations
from gpuopt.evaluation.views import prediction
from gpuopt.evaluation.views.output import write_text
from gpuopt.evaluation.views.records import Root, ci, pct, ref_text
from gpuopt.models.evaluation.views import HandoffData

HEADER = "DRAFT — generated from records by gpuopt; the conclusion is the author's to write"
PLACEHOLDERS = ("Conclusion", "Stop reason", "Open risks", "Next directions")
TO_COMPLETE = "TO COMPLETE"


class _Doc:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.facts = 0

    def fact(self, text: str, rid: str, sha: str) -> None:
        self.lines.append(f"- {text} {ref_text(rid, sha)}")
        self.facts += 1

    def head(self, text: str) -> None:
        self.lines += ["", f"## {text}", ""]

    def note(self, text: str) -> None:
        self.lines.append(text)


def _stat(result: Any) -> str:
    stats = getattr(result, "statistics", None)
    if stats is None:
        return "performance not interpreted" if not getattr(result, "performance_interpreted", True) else ""
    p = stats.primary
    shown = effect(p.estimate_pct) if getattr(p, "effect_scale", None) == "log_ratio" else pct(p.estimate_pct)
    return f"primary {p.metric} {p.verdict} {shown} {ci(p.ci_low_pct, p.ci_high_pct)}"


def _cited(doc: _Doc, root: Root, inv_id: str) -> None:
    """The capture diffs a result cites, beside its verdict."""
    for c, sha in citations.for_result(root.store, inv_id):
        doc.fact(f"  capture diff: {citations.line(c)}", c.id, sha)


def _target_section(doc: _Doc, root: Root) -> None:
    target, ref = root.target_and_ref
    o = target.objective
    doc.head("Target")
    doc.fact(
        f"claim layer {target.claim_layer}, primary {o.primary} ({target.metrics[o.primary].unit}, "
        f"{target.metrics[o.primary].direction} is better), minimum effect {o.minimum_effect_pct:g} %, "
        f"attribution scope {target.runtime_identity.attribution_scope}, cases "
        f"{', '.join(target.test_set.case_ids)}, GPUs {', '.join(target.gpus) or 'none (CPU-only)'}",
        ref.id,
        ref.sha256,
    )


def _final_audits(root: Root) -> dict[str, tuple[Any, str]]:
    """Final-audit results by the selection they audited."""
    out = {}
    for inv_id in root.ids("result"):
        found = root.result(inv_id)
        if found is not None and found[0].operation == "final_audit":
            out[found[0].champion.selection.id] = found  # type: ignore[attr-defined]
    return out


def _champion_section(doc: _Doc, root: Root) -> None:
    target, tref = root.target_and_ref
    cur = records.resolve_champion(root.store, target, tref)
    doc.head("Champion")
    if cur.selection is None or cur.selection_ref is None:
        doc.fact(f"the original ({target.original.digest}): nothing selected", tref.id, tref.sha256)
        return
    sel = cur.selection
    doc.fact(
        f"{sel.decision}: variant {cur.variant.digest}, previous "
        f"{'none' if sel.previous is None else sel.previous.id}",
        cur.selection_ref.id,
        cur.selection_ref.sha256,
    )
    found = root.result(sel.result.invocation_id)
    if found is not None:
        doc.fact(
            f"justified by {found[0].operation} {found[0].verdict}: {_stat(found[0])}",
            sel.result.invocation_id,
            found[1],
        )
        _cited(doc, root, sel.result.invocation_id)
    audit = _final_audits(root).get(cur.selection_ref.id)
    if audit is None:
        layer = target.claim_layer
        status = "final_audit: missing" + (
            f" (workload- and serving-layer statements about this Champion wait for it; layer {layer})"
            if layer in ("workload", "serving")
            else ""
        )
        doc.fact(status, cur.selection_ref.id, cur.selection_ref.sha256)
    else:
        result, sha = audit
        doc.fact(
            f"final audit {result.verdict} ({result.stop_reason}): {_stat(result)}", result.invocation_id, sha
        )
        _cited(doc, root, result.invocation_id)


def _experiments_section(doc: _Doc, root: Root) -> None:
    by_mechanism: dict[str, list[str]] = {}
    for exp_id in root.ids("experiment"):
        exp, _ = root.experiment(exp_id)
        by_mechanism.setdefault(exp.mechanism, []).append(exp_id)
    results_by_exp: dict[str, list[str]] = {}
    for inv_id in root.ids("invocation"):
        line = root.latest[("invocation", inv_id)]
        of = line.keys.get("experiment")
        if isinstance(of, str):
            results_by_exp.setdefault(of, []).append(inv_id)
    doc.head("Experiments by mechanism")
    if not by_mechanism:
        doc.note("(no Experiment recorded)")
    for mechanism, exp_ids in sorted(by_mechanism.items()):
        doc.note(f"### {mechanism}")
        for exp_id in exp_ids:
            exp, sha = root.experiment(exp_id)
            comp = exp.opportunity_claim.computed
            ceiling = (
                "not quantified" if comp.ceiling_pct is None else f"Amdahl ceiling {comp.ceiling_pct:.4g} %"
            )
            doc.fact(
                f"candidate {exp.candidate.digest} (changed {', '.join(exp.changed_paths)}), "
                f"rejection scope {exp.rejection_scope}, {ceiling}; hypothesis: {exp.hypothesis}",
                exp_id,
                sha,
            )
            for inv_id in results_by_exp.get(exp_id, []):
                found = root.result(inv_id)
                if found is None:
                    continue
                result, rsha = found
                extra = ""
                checked = prediction.of_result(root, inv_id)
                if checked is not None:
                    extra = f"; prediction check {checked.short()}: {checked.text()}"
                doc.fact(
                    f"{result.operation} {result.verdict} ({result.stop_reason}): {_stat(result)}{extra}",
                    inv_id,
                    rsha,
                )
                _cited(doc, root, inv_id)


def _scoped_section(doc: _Doc, root: Root) -> None:
    doc.head("Scoped local results")
    found_any = False
    for inv_id in root.ids("result"):
        found = root.result(inv_id)
        stats = None if found is None else getattr(found[0], "statistics", None)
        if found is None or stats is None or found[0].verdict == "passed":
            continue
        for s in stats.secondary:
            if s.verdict == "improved":
                found_any = True
                doc.fact(
                    f"secondary {s.metric} improved {pct(s.estimate_pct)} {ci(s.ci_low_pct, s.ci_high_pct)} "
                    f"in a {found[0].operation} that did not pass ({found[0].verdict}); never a Champion",
                    inv_id,
                    found[1],
                )
    if not found_any:
        doc.note("(none: no secondary improved in a result that did not pass)")


def _noise_section(doc: _Doc, root: Root) -> None:
    doc.head("Noise and resolution")
    any_noise = False
    for inv_id in root.ids("result"):
        found = root.result(inv_id)
        if found is None or found[0].operation != "noise":
            continue
        facts = getattr(found[0], "noise", None)
        if facts is None:
            continue
        for name, n in facts.metrics.items():
            any_noise = True
            at = ", ".join(f"{a.mde_pct:.3g} % at {a.n_pairs}" for a in n.at)
            doc.fact(
                f"{name}: A/A {n.aa_verdict} {pct(n.aa_estimate_pct)} "
                f"{ci(n.aa_ci_low_pct, n.aa_ci_high_pct)}, "
                f"SD {n.sd_log:.4g} (log ratio), MDE {at} pairs ({facts.lifecycle}, "
                f"{facts.samples_per_call} samples per call)",
                inv_id,
                found[1],
            )
    if not any_noise:
        doc.note("(no noise record)")


def _runtime_section(doc: _Doc, root: Root) -> None:
    target, tref = root.target_and_ref
    doc.head("Contamination")
    c = target.contamination
    if c.sampler == "disabled":
        text = "sampler disabled: contamination was not checked (checked: false in every result)"
    else:
        rules = ", ".join(r.id for r in c.rules) or "none"
        text = (
            f"sampler {c.sampler} every {c.period_ms} ms; rules {rules}; each result records "
            "contamination.checked, the pairs invalidated by rule and role, and pre_idle"
        )
    doc.fact(text, tref.id, tref.sha256)
    doc.head("Unfinished or lost invocations")
    pending = 0
    for inv_id in root.ids("invocation"):
        if ("result", inv_id) in root.latest:
            continue
        st = invocation.status(root.store.root, inv_id)
        pending += 1
        line = root.latest[("invocation", inv_id)]
        doc.fact(f"{st.operation}: {st.state}, cleanup {st.cleanup_status}", inv_id, line.sha256)
    if not pending:
        doc.note("(none)")
    doc.head("GPU-seconds")
    total = held = 0.0
    count = 0
    for inv_id in root.ids("result"):
        found = root.result(inv_id)
        if found is not None:
            total += found[0].gpu_seconds
            held += found[0].gpu_seconds_held
            count += 1
    doc.fact(
        f"{total:.3f} GPU-seconds in calls, {held:.3f} held, over {count} results "
        f"({len(target.gpus)} GPUs per call)",
        tref.id,
        tref.sha256,
    )


def render(root_path: str | Path) -> tuple[str, int]:
    """The draft's Markdown and its number of cited facts."""
    root = Root.open(root_path)
    doc = _Doc()
    doc.note(f"# Handoff notes — {HEADER}")
    doc.note("")
    doc.note(f"**{HEADER}.** Every fact below cites its record; sections marked {TO_COMPLETE} are yours.")
    _target_section(doc, root)
    _champion_section(doc, root)
    _experiments_section(doc, root)
    _scoped_section(doc, root)
    _noise_section(doc, root)
    _runtime_section(doc, root)
    for name in PLACEHOLDERS:
        doc.head(name)
        doc.note(f"{TO_COMPLETE}")
    return "\n".join(doc.lines) + "\n", doc.facts


def write(root_path: str | Path, out: str | Path | None = None) -> HandoffData:
    """Writes the draft (default ``ROOT/handoff.draft.md``)."""
    text, facts = render(root_path)
    path = Path(out) if out is not None else Path(root_path) / "handoff.draft.md"
    write_text(path, text)
    return HandoffData(path=str(path), draft=True, facts=facts, placeholders=list(PLACEHOLDERS))
