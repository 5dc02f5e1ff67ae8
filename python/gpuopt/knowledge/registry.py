"""The card registry: ``cards.json``, ``sources.json`` and ``facts.json`` shipped inside the package.

Loading validates everything a card promises: known sources with a locator and review date, unique ids,
architecture strings gpuopt knows, rule facts the engines emit (``facts.json``, regenerated from the real
fixtures by the test suite), rule scopes that fit their facts, SASS signature keys of the built-in
catalog. Any violation is ``knowledge_registry_invalid`` (exit 2), naming the card and field.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from gpuopt._files import read_bounded
from gpuopt.errors import InputError
from gpuopt.knowledge.arch import parse_arch
from gpuopt.knowledge.facts import ROW_SCOPES, SCOPE_SUBJECT
from gpuopt.models.knowledge import Card, CardsFile, Condition, FactCatalog, Source, SourcesFile

FILES = ("cards.json", "sources.json", "facts.json")
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Registry:
    """A validated registry: cards in file order, sources by id, the fact catalog."""

    version: int
    sha256: str = field(metadata={"doc": "SHA-256 over cards.json, sources.json and facts.json"})
    cards: tuple[Card, ...]
    sources: dict[str, Source]
    facts: dict[str, frozenset[str]]
    row_names: dict[str, frozenset[str]]
    ncu_metrics: dict[str, str]

    def source(self, key: str) -> Source:
        return self.sources[key]


def _invalid(message: str, *, path: str | None = None, expected: str | None = None) -> InputError:
    return InputError("knowledge_registry_invalid", message, path=path, expected=expected)


def _parse(model: type[M], data: bytes, name: str) -> M:
    try:
        raw = json.loads(data, object_pairs_hook=_no_duplicates)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _invalid(f"{name}: not JSON ({exc})", path=name) from None
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"])
        raise _invalid(f"{name}: {where}: {err['msg']}", path=f"{name}:{where}") from None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _read(directory: Path | None) -> dict[str, bytes]:
    if directory is None:
        base = resources.files("gpuopt.knowledge") / "registry"
        return {name: (base / name).read_bytes() for name in FILES}
    out = {}
    for name in FILES:
        path = directory / name
        out[name] = read_bounded(path, f"knowledge registry {name}", 64 << 20)
    return out


@functools.lru_cache(maxsize=4)
def load(directory: str | None = None) -> Registry:
    """The registry in ``directory`` (cards, sources and facts JSON), or the bundled one."""
    raw = _read(None if directory is None else Path(directory))
    sources_file = _parse(SourcesFile, raw["sources.json"], "sources.json")
    cards_file = _parse(CardsFile, raw["cards.json"], "cards.json")
    catalog = _parse(FactCatalog, raw["facts.json"], "facts.json")
    if sources_file.version != cards_file.version:
        raise _invalid("cards.json and sources.json have different versions", path="cards.json:version")
    sources = _unique({s.id: s for s in sources_file.sources}, len(sources_file.sources), "sources.json")
    _unique({c.id: c for c in cards_file.cards}, len(cards_file.cards), "cards.json")
    facts = {s.scope: frozenset(s.facts) for s in catalog.scopes}
    rows = {s.scope: frozenset(s.row_names) for s in catalog.scopes}
    if set(facts) != set(SCOPE_SUBJECT):
        raise _invalid("facts.json does not list every scope", expected=", ".join(SCOPE_SUBJECT))
    for card in cards_file.cards:
        _check_card(card, sources, facts)
    digest = hashlib.sha256(b"".join(raw[name] for name in FILES)).hexdigest()
    return Registry(
        cards_file.version,
        digest,
        tuple(cards_file.cards),
        sources,
        facts,
        rows,
        dict(catalog.ncu_metrics),
    )


def _unique(by_id: dict[str, Any], count: int, name: str) -> dict[str, Any]:
    if len(by_id) != count:
        raise _invalid(f"{name}: ids are not unique", path=name)
    return by_id


def _check_card(card: Card, sources: dict[str, Source], facts: dict[str, frozenset[str]]) -> None:
    where = f"cards.json:{card.id}"
    refs = [
        *card.sources,
        *(c.threshold for r in card.rules for c in [*r.signals, *r.counter] if c.threshold),
    ]
    for ref in refs:
        if ref.source not in sources:
            raise _invalid(f"{card.id}: unknown source {ref.source!r}", path=f"{where}.sources")
    for arch in card.identity.architectures:
        try:
            parse_arch(arch)
        except InputError as exc:
            raise _invalid(f"{card.id}: {exc.message}", path=f"{where}.identity.architectures") from None
    if card.identity.architectures and card.identity.min_compute_capability:
        raise _invalid(
            f"{card.id}: give architectures or a minimum compute capability, not both",
            path=f"{where}.identity",
        )
    _check_signatures(card, where)
    for rule in card.rules:
        for condition in [*rule.signals, *rule.counter]:
            _check_condition(card.id, where, rule.scope, condition, facts)


def _check_signatures(card: Card, where: str) -> None:
    if not card.sass_signatures:
        return
    known = _signature_keys()
    for key in card.sass_signatures:
        if key not in known:
            raise _invalid(
                f"{card.id}: {key!r} is not a key of sass_signatures.json", path=f"{where}.sass_signatures"
            )


@functools.lru_cache(maxsize=1)
def _signature_keys() -> frozenset[str]:
    from gpuopt import sass

    catalog = json.loads(sass.builtin_catalog())
    return frozenset(s["key"] for s in catalog["signatures"])


def _check_condition(
    card_id: str, where: str, scope: str, c: Condition, facts: dict[str, frozenset[str]]
) -> None:
    for name in (c.fact, c.per, c.other):
        if name is None:
            continue
        fact_scope, _, field = name.partition(":")
        if fact_scope not in facts or field not in facts[fact_scope]:
            raise _invalid(
                f"{card_id}: no engine emits the fact {name!r}",
                path=f"{where}.rules",
                expected="a SCOPE:FIELD listed in facts.json",
            )
        if SCOPE_SUBJECT[fact_scope] != scope:
            raise _invalid(
                f"{card_id}: fact {name!r} describes a {SCOPE_SUBJECT[fact_scope]}, the rule a {scope}",
                path=f"{where}.rules",
            )
    fact_scope = c.fact.partition(":")[0]
    if (c.rows is not None) != (fact_scope in ROW_SCOPES):
        raise _invalid(f"{card_id}: rows= applies exactly to the row scopes {sorted(ROW_SCOPES)}", path=where)
    # Presence (> 0, == 0) and a plain comparison of two facts (factor 1) state no advisory number.
    unsourced = (c.value == 0 and c.other is None and c.per is None) or (c.other is not None and c.value == 1)
    if c.threshold is None and not unsourced:
        raise _invalid(
            f"{card_id}: the threshold {c.op} {c.value} of {c.fact} states no source",
            path=f"{where}.rules",
            expected="threshold: {source, locator, summary}",
        )
