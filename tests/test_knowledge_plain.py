"""Knowledge that reads as sentences (issue 30): no card text and no evaluated signal holds a raw
comparison such as "1806 < 7259 x api median"; a threshold that is a multiple of another fact says
"times" and its value with a unit; ``knowledge query --limit N`` keeps the first N cards."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cli_inproc import run_main
from gpuopt import knowledge
from gpuopt.knowledge import wording
from gpuopt.knowledge.registry import load
from gpuopt.models.knowledge import Condition

#: A comparison written with symbols between numbers or before a multiplier ("1806 < 7259", "< 2 x").
RAW = re.compile(r"\d\s*(<=|>=|==|!=|<|>)\s*\d|(<=|>=|<|>)\s*[\d.,]+\s*x\b|\d\s*x\s+\w")
#: Symbols an evaluated signal, a sentence, never holds.
SYMBOLS = re.compile(r"<=|>=|==|!=|<|>")


def _strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)
    elif isinstance(value, str):
        yield key, value


def test_no_card_text_holds_a_raw_comparison() -> None:
    registry = load(None)
    texts = [
        (card.id, key, text)
        for card in registry.cards
        for key, text in _strings(card.model_dump(mode="json"))
        if key not in ("op", "fact", "other", "per", "locator", "url")
    ]
    assert len(texts) > 500
    assert [t for t in texts if RAW.search(t[2])] == []


def test_every_evaluated_signal_is_a_sentence_with_units(shared: Path) -> None:
    data = knowledge.match(
        [
            shared / "gpuopt/h200/decode/decode_eager.sqlite",
            shared / "gpuopt/h200/decode/decode_eager_trace.json.gz",
            shared / "h200/ncu/kernels_full.ncu-rep",
        ]
    )
    signals = [
        s
        for subject in data.subjects
        for card in subject.cards
        for s in [*card.signals, *card.counter_signals]
    ]
    assert len(signals) > 10
    # A cited section path ("Expert Systems Analysis > Expert System Rules") is a locator, not a comparison.
    said = [re.sub(r" \(threshold from [^)]*\)$", "", s.text) for s in signals]
    assert [t for t in said if SYMBOLS.search(t) or RAW.search(t)] == []
    assert all(re.search(r"\d", s.text) for s in signals)


def test_a_threshold_that_is_a_multiple_of_another_fact_reads_as_words() -> None:
    kernel, api = "nsys.device:launch.kernel_time.median_ns", "nsys.device:launch.api_time.median_ns"
    condition = Condition(fact=kernel, op="<", value=2, other=api)
    text = wording.sentence(condition, 1806.0, 14518.0, True, 7259.0, None)
    assert text == (
        "median kernel time 1,806 ns is below 2 times the median launch call time 7,259 ns (14,518 ns)"
    )
    assert not RAW.search(text) and not SYMBOLS.search(text)


def test_knowledge_query_limit_keeps_the_first_cards() -> None:
    whole = run_main("knowledge", "query", "--json")
    assert whole.code == 0, whole.stderr
    every = whole.json()["data"]
    assert every["total_hits"] == len(every["hits"]) > 3
    run = run_main("knowledge", "query", "--limit", "3", "--json")
    data = run.json()["data"]
    assert [h["card"]["id"] for h in data["hits"]] == [h["card"]["id"] for h in every["hits"][:3]]
    assert data["total_hits"] == every["total_hits"]
    people = run_main("knowledge", "query", "--limit", "3")
    assert f"(3 of {every['total_hits']} cards;" in people.stdout
    bad = run_main("knowledge", "query", "--limit", "-1", "--json")
    assert bad.code == 2 and json.loads(bad.stdout)["errors"][0]["code"] == "usage_invalid"
