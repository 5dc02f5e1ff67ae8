"""``gpuopt knowledge match`` evidence as sentences (issue 27): each evaluated condition names the fact in
words with its value and unit, the comparison, the threshold and where the threshold came from (a cited
source, another fact of the subject, or the presence test), on real fixtures; value, op and threshold stay
the machine-readable fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt import knowledge
from gpuopt.knowledge import wording
from gpuopt.knowledge.registry import load
from gpuopt.models.knowledge import CardSignal, KnowledgeMatchData

GPU_SOL = (
    "threshold from Nsight Compute Kernel Profiling Guide: Sections and Rules > GPU Speed Of Light Throughput"
)
LOW_UTILIZATION = (
    "threshold from Nsight Systems Post-Collection Analysis Guide: Expert Systems Analysis > Expert System "
    "Rules > GPU Low Utilization Rules > GPU Low Utilization"
)


def _card(data: KnowledgeMatchData, subject: str, card: str) -> CardSignal:
    found = next(s for s in data.subjects if s.name == subject)
    return next(c for c in found.cards if c.card == card)


def test_a_fact_against_another_fact_names_both_with_their_units(shared: Path) -> None:
    # The eager decode capture: kernels launched one by one, each shorter than its launch call.
    data = knowledge.match([shared / "gpuopt/h200/decode/decode_eager.sqlite"])
    launch = _card(data, "device 0", "diagnostic.host_launch_overhead")
    assert [v.text for v in launch.signals] == [
        f"share of the device's span with GPU work running 10.6 % is below 50 % ({LOW_UTILIZATION})",
        "median queue delay from launch call end to kernel start 2,152 ns is below the median launch call "
        "time 5,880 ns",
        "median kernel time 2,208 ns is below the median launch call time 5,880 ns",
    ]
    kernel = launch.signals[2]
    assert (kernel.value, kernel.op, kernel.threshold, kernel.other) == (
        2208.0,
        "<",
        5880.0,
        "nsys.device:launch.api_time.median_ns",
    )
    # A counter-signal that was evaluated and did not hold reads as what it is.
    graphs = _card(data, "device 0", "mechanism.cuda_graphs")
    assert [v.text for v in graphs.counter_signals] == [
        "number of cudaGraphLaunch calls 0 is not above zero (the rule tests for any)",
        "number of cuGraphLaunch calls 0 is not above zero (the rule tests for any)",
    ]


def test_sourced_thresholds_presence_tests_and_shares(shared: Path) -> None:
    data = knowledge.match(
        [
            shared / "h200/ncu/kernels_full.raw.csv",
            shared / "h200/sass/kernels_sm90.cuobjdump.sass",
            shared / "h200/nsys/eager.sqlite",
            shared / "h200/graphs/graph_trace.json",
        ]
    )
    bound = _card(data, "vec_add", "diagnostic.memory_throughput_bound")
    assert [v.text for v in bound.signals] == [
        f"mean memory throughput 84.6 % of peak is at least 60 % of peak ({GPU_SOL})",
        "mean memory throughput 84.6 % of peak is above the mean SM throughput 13.5 % of peak",
    ]
    spill = _card(data, "_Z11local_spillPKfPfi", "mechanism.register_spill_local_memory")
    assert [v.text for v in spill.signals] == [
        "number of local-memory store instructions (STL) 16 is above zero (the rule tests for any)",
        "number of local-memory load instructions (LDL) 2 is above zero (the rule tests for any)",
    ]
    serial = _card(data, "device 0", "diagnostic.copy_compute_serialization")
    assert [v.text for v in serial.signals] == [
        "time copies (memcpy, memset) ran 7,110,260 ns is above zero (the rule tests for any)",
        "time kernels and copies ran at once 0 ns equals zero (the rule tests for none)",
    ]
    starved = _card(data, "rank 0 device 0", "diagnostic.data_pipeline_starvation")
    [share] = starved.signals
    assert share.text == (
        "GPU idle time waiting on the host as a share of the trace window (first to last GPU event) 78.3 % "
        f"is above 50 % ({LOW_UTILIZATION})"
    )
    assert (share.per, share.threshold) == ("torch.device:temporal.window_ns", 0.5)


def test_every_fact_a_card_compares_has_words() -> None:
    registry = load()
    named = {
        name
        for card in registry.cards
        for rule in card.rules
        for c in [*rule.signals, *rule.counter]
        for name in (c.fact, c.per, c.other)
        if name is not None
    }
    assert sorted(named - set(wording.FACTS)) == []
    # No fact's words are its SCOPE:FIELD name or carry a comparison sign.
    for words, _unit in wording.FACTS.values():
        assert ":" not in words and not any(op in words for op in ("<", ">", "="))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1806.0, "1,806"),
        (7259.0, "7,259"),
        (84.5712, "84.6"),
        (0.4237, "0.424"),
        (4294223829.33, "4,294,223,829.3"),
    ],
)
def test_numbers_read_as_people_write_them(value: float, text: str) -> None:
    assert wording.number(value) == text


def test_match_cli_prints_the_sentences(shared: Path) -> None:
    run = gpuopt("knowledge", "match", str(shared / "h200/sass/kernels_sm90.cuobjdump.sass"))
    assert run.code == 0, run.stderr
    assert "number of tensor-core MMA instructions 10 is above zero (the rule tests for any)" in run.stdout
    assert "tensor_core_count=" not in run.stdout
