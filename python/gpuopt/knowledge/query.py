"""``knowledge query``: candidate cards for a mechanism or phenomenon, each with its applicability.

Phenomenon text is normalised (NFKC, case-folded, every run of characters other than letters and digits
made one space, plural and -ing endings dropped from each word) and matched, in this order, against a
card's id, its aliases and title, the fact names of its rules, and the ncu metrics those facts are read
from (compared on the metric's base name, before the first ``.``, so a roll-up or suffix variant still
matches). A phenomenon that matches no card that way matches a card when each of its words is a word of
one of the card's terms. Every match names the term and how it matched.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Literal

from gpuopt.errors import InputError
from gpuopt.knowledge.arch import cc_of, parse_version
from gpuopt.knowledge.match import cite
from gpuopt.knowledge.registry import Registry
from gpuopt.models.knowledge import (
    Applicability,
    Card,
    CardView,
    Identity,
    PhenomenonMatch,
    QueryHit,
    Reason,
    VersionRange,
)

NORMALISATION = (
    "NFKC, case-folded, runs of non-alphanumerics -> one space, plural/-ing endings dropped; equal to an "
    "id, alias, title or fact name, or the same ncu metric base name; else every query word among one "
    "term's words"
)
_NON_WORD = re.compile(r"[^0-9a-z]+")
_RELATION_ORDER = {"compatible": 0, "related": 1, "incompatible": 2}
Via = Literal["key", "alias", "fact", "ncu_metric", "tokens"]


def normalise(text: str) -> str:
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def _stem(word: str) -> str:
    if word.endswith("ing") and len(word) > 5:
        return word[:-3]
    if word.endswith("es") and len(word) > 4:
        return word[:-2]
    if word.endswith("s") and len(word) > 3:
        return word[:-1]
    return word


def _stemmed(text: str) -> str:
    return " ".join(_stem(w) for w in normalise(text).split())


def _words(text: str) -> set[str]:
    return {_stem(w) for w in normalise(text).split()}


def _terms(registry: Registry, card: Card) -> list[tuple[Via, str]]:
    terms: list[tuple[Via, str]] = [("key", card.id), ("key", card.id.split(".", 1)[-1])]
    terms += [("alias", a) for a in card.aliases] + [("alias", card.title)]
    facts = {c.fact for r in card.rules for c in [*r.signals, *r.counter]}
    terms += [("fact", f) for f in sorted(facts)] + [("fact", f.split(":", 1)[1]) for f in sorted(facts)]
    metrics = registry.ncu_metrics
    for fact in sorted(facts):
        scope, _, field = fact.partition(":")
        if scope == "ncu.launch" and field in metrics:
            terms.append(("ncu_metric", metrics[field]))
    return terms


def _metric_bases(metric: str) -> set[str]:
    """``32 * (l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum)`` -> its metric names' bases."""
    return {m.split(".", 1)[0] for m in re.findall(r"[a-z0-9_]+__[a-z0-9_.]+", metric.lower())}


def phenomenon_matches(
    registry: Registry, card: Card, phenomena: Iterable[str], *, by_words: bool = False
) -> list[PhenomenonMatch]:
    """Exact matches of each phenomenon on the card's terms; with ``by_words``, word matches instead."""
    out = []
    terms = _terms(registry, card)
    for query in phenomena:
        norm = normalise(query)
        if not norm:
            continue
        found = _by_words(norm, terms) if by_words else _exact(norm, query, terms)
        if found is not None:
            out.append(PhenomenonMatch(query=query, normalised=norm, matched=found[1], via=found[0]))
    return out


def _exact(norm: str, query: str, terms: list[tuple[Via, str]]) -> tuple[Via, str] | None:
    base = query.strip().lower().split(".", 1)[0]
    stemmed = _stemmed(norm)  # once per query, not once per term (a 128 KiB query took 5 s)
    for via, term in terms:
        if via == "ncu_metric":
            if base in _metric_bases(term):
                return via, term
        elif _stemmed(term) == stemmed:
            return via, term
    return None


def _by_words(norm: str, terms: list[tuple[Via, str]]) -> tuple[Via, str] | None:
    wanted = {_stem(w) for w in norm.split()}
    for via, term in terms:
        if via != "ncu_metric" and wanted <= _words(term):
            return "tokens", term
    return None


def _version_reasons(field: str, wanted: VersionRange, actual: str | None) -> list[Reason]:
    expected = f"{wanted.min or '*'} .. {wanted.max or '*'}"
    if actual is None:
        return [Reason(field=field, kind="limitation", expected=expected, actual=None)]
    try:
        have = parse_version(actual, field)
    except InputError:
        return [Reason(field=field, kind="limitation", expected=expected, actual=actual)]
    if wanted.min is not None and have < parse_version(wanted.min, field):
        return [Reason(field=field, kind="mismatch", expected=expected, actual=actual)]
    if wanted.max is not None:
        bound = parse_version(wanted.max, field)
        if have[: len(bound)] > bound:
            return [Reason(field=field, kind="limitation", expected=expected, actual=actual)]
    return []


def applicability(card: Card, identity: Identity) -> Applicability:
    """compatible / related (a limitation: not stated, or beyond what the material covers) / incompatible."""
    reasons: list[Reason] = []
    wanted = card.identity
    if wanted.architectures:
        expected = " or ".join(wanted.architectures)
        if identity.arch is None:
            reasons.append(Reason(field="arch", kind="limitation", expected=expected, actual=None))
        elif identity.arch not in wanted.architectures:
            reasons.append(Reason(field="arch", kind="mismatch", expected=expected, actual=identity.arch))
    if wanted.min_compute_capability is not None:
        expected = f">= {wanted.min_compute_capability}"
        if identity.arch is None:
            reasons.append(
                Reason(field="compute_capability", kind="limitation", expected=expected, actual=None)
            )
        else:
            major, minor = cc_of(identity.arch)
            need = tuple(int(p) for p in wanted.min_compute_capability.split("."))
            if (major, minor) < need:
                actual = f"{major}.{minor} ({identity.arch})"
                reasons.append(
                    Reason(field="compute_capability", kind="mismatch", expected=expected, actual=actual)
                )
    if wanted.cuda is not None:
        reasons += _version_reasons("cuda", wanted.cuda, identity.cuda)
    for name, bounds in wanted.frameworks.items():
        reasons += _version_reasons(f"frameworks.{name}", bounds, identity.frameworks.get(name))
    kinds = {r.kind for r in reasons}
    relation = "incompatible" if "mismatch" in kinds else "related" if kinds else "compatible"
    return Applicability(relation=relation, reasons=reasons)


def view(registry: Registry, card: Card) -> CardView:
    return CardView(
        id=card.id,
        kind=card.kind,
        title=card.title,
        mechanism=card.mechanism,
        distinguishing_question=card.distinguishing_question,
        required_evidence=card.required_evidence,
        counter_signals=card.counter_signals,
        invalidators=card.invalidators,
        identity=card.identity,
        trace_shape=dict(card.trace_shape),
        sources=[cite(registry, s) for s in card.sources],
    )


def find_card(registry: Registry, key: str) -> Card:
    for card in registry.cards:
        if key in (card.id, card.id.split(".", 1)[-1]):
            return card
    raise InputError(
        "knowledge_card_unknown",
        f"no card {key!r}",
        expected="a card id or its name after the kind, e.g. mechanism.cuda_graphs or cuda_graphs "
        "(gpuopt knowledge query lists them)",
        observed=key,
    )


def query(
    registry: Registry, identity: Identity, mechanisms: list[str], phenomena: list[str]
) -> list[QueryHit]:
    """Cards named by ``mechanisms``; else cards matching a phenomenon (word matching is used only for a
    phenomenon that matches no card exactly); else every card. Ordered compatible, related, incompatible."""
    cards = [find_card(registry, key) for key in mechanisms] if mechanisms else list(registry.cards)
    exact = {card.id: phenomenon_matches(registry, card, phenomena) for card in cards}
    matched = {m.query for found in exact.values() for m in found}
    loose = [p for p in phenomena if p not in matched]
    hits = []
    for card in cards:
        found = exact[card.id] + phenomenon_matches(registry, card, loose, by_words=True)
        if phenomena and not found and not mechanisms:
            continue
        hits.append(
            QueryHit(card=view(registry, card), applicability=applicability(card, identity), matches=found)
        )
    return sorted(hits, key=lambda h: _RELATION_ORDER[h.applicability.relation])
