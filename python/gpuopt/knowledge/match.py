"""``knowledge match``: evaluate the cards' observation rules on the facts the engines computed.

For each subject (kernel, function, device) a rule is evaluated when the evidence carries every fact it
names; a card's signals hold when one of its rules has every signal true and no counter-signal true.
Values and thresholds are reported as read; nothing is ranked or recommended.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable

from gpuopt.knowledge import wording
from gpuopt.knowledge.facts import Evidence, SubjectFacts
from gpuopt.knowledge.registry import Registry
from gpuopt.models.knowledge import (
    Card,
    CardSignal,
    Condition,
    EvidenceFile,
    FactValue,
    ObservationRules,
    SourceCitation,
    SourceRef,
    Subject,
)

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}
# A versioned API name (cudaGraphLaunch_v10000) is the same call as its base name.
_VERSION_SUFFIX = re.compile(r"_v\d+$")


def cite(registry: Registry, ref: SourceRef) -> SourceCitation:
    source = registry.source(ref.source)
    return SourceCitation(
        source=source.id,
        title=source.title,
        url=source.url,
        version=source.version,
        last_reviewed=source.last_reviewed,
        locator=ref.locator,
        summary=ref.summary,
    )


def _value(subject: SubjectFacts, name: str, rows: str | None) -> float | None:
    scope = name.partition(":")[0]
    if rows is not None:
        table = subject.row_facts.get(scope)
        if table is None:
            return None
        picked = [r.get(name) for n, r in table if _VERSION_SUFFIX.sub("", n) == rows]
        return float(sum(v for v in picked if v is not None))
    if name not in subject.facts:
        return None
    return subject.facts[name]


def evaluate(registry: Registry, subject: SubjectFacts, c: Condition) -> FactValue | None:
    """The condition on this subject, or None when the subject lacks a fact it needs."""
    value = _value(subject, c.fact, c.rows)
    if value is None:
        return None
    if c.per is not None:
        per = _value(subject, c.per, None)
        if per is None or per == 0:
            return None
        value = value / per
    threshold = c.value
    other = None
    if c.other is not None:
        other = _value(subject, c.other, None)
        if other is None:
            return None
        threshold = c.value * other
    holds = _OPS[c.op](value, threshold)
    source = None if c.threshold is None else cite(registry, c.threshold)
    return FactValue(
        fact=c.fact,
        rows=c.rows,
        per=c.per,
        other=c.other,
        value=value,
        op=c.op,
        threshold=threshold,
        holds=holds,
        threshold_source=source,
        text=wording.sentence(c, value, threshold, holds, other, source),
    )


def _rule(
    registry: Registry, subject: SubjectFacts, rule: ObservationRules
) -> tuple[list[FactValue], list[FactValue]] | None:
    """(signals, counters) when every signal holds and no counter does; None otherwise."""
    if rule.scope != subject.kind:
        return None
    signals = [evaluate(registry, subject, c) for c in rule.signals]
    if any(s is None or not s.holds for s in signals):
        return None
    counters = [v for v in (evaluate(registry, subject, c) for c in rule.counter) if v is not None]
    if any(v.holds for v in counters):
        return None
    return [s for s in signals if s is not None], counters


def _shape_fits(card: Card, shape: dict[str, bool]) -> bool:
    return all(shape.get(key, wanted) == wanted for key, wanted in card.trace_shape.items())


def card_signals(registry: Registry, subject: SubjectFacts, shape: dict[str, bool]) -> list[CardSignal]:
    out = []
    for card in registry.cards:
        if not _shape_fits(card, shape):
            continue
        for rule in card.rules:
            held = _rule(registry, subject, rule)
            if held is not None:
                out.append(
                    CardSignal(
                        card=card.id,
                        title=card.title,
                        signals=held[0],
                        counter_signals=held[1],
                        sources=[cite(registry, s) for s in card.sources],
                    )
                )
                break
    return out


def match(registry: Registry, evidence: list[Evidence]) -> tuple[list[EvidenceFile], list[Subject]]:
    files = []
    subjects = []
    for item in evidence:
        files.append(
            EvidenceFile(
                path=item.path, kind=item.kind, subjects=len(item.subjects), trace_shape=item.trace_shape
            )
        )
        for subject in item.subjects:
            subjects.append(
                Subject(
                    evidence=item.path,
                    kind=subject.kind,
                    name=subject.name,
                    rows=subject.rows,
                    cards=card_signals(registry, subject, item.trace_shape),
                )
            )
    return files, subjects
