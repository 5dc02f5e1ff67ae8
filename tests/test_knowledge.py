"""``gpuopt knowledge query|match`` and ``gpuopt audit versions`` on real fixtures and real records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import gpuopt
from gpuopt import knowledge, sass
from gpuopt.errors import InputError
from gpuopt.models.knowledge import KnowledgeMatchData, Subject

SPILL = "mechanism.register_spill_local_memory"
TENSOR = "mechanism.tensor_core_mma"
GRAPHS = "mechanism.cuda_graphs"
FAST_MATH = "mechanism.fast_math_sfu"
#: A float kernel built with -use_fast_math (tests/data/recipes/fast_math.cu, tests/data/README.md).
FAST_MATH_SASS = Path(__file__).parent / "data/sass/fast_math_sm90.cuobjdump.sass"
LAUNCH = "diagnostic.host_launch_overhead"
#: The eager decode capture made with ../shared/recipes/decode.py (nsys export; tests/data/README.md).
DECODE_EAGER = "gpuopt/h200/decode/decode_eager.sqlite"
#: graphs/graph_trace.json, device 0: idle waiting on the host, and first-to-last GPU event window.
HOST_WAIT_NS, WINDOW_NS = 6_887_739, 8_801_563


def _cards(data: KnowledgeMatchData, name: str) -> dict[str, Any]:
    subject = next(s for s in data.subjects if s.name == name or name in s.name)
    return {c.card: {v.fact: v for v in c.signals} for c in subject.cards}


@pytest.fixture(scope="module")
def kernels(shared: Path) -> KnowledgeMatchData:
    return knowledge.match(
        [
            shared / "h200/ncu/kernels_full.raw.csv",
            shared / "h200/sass/kernels_sm90.cuobjdump.sass",
            shared / "h200/sass/ptxas_v_sm90.txt",
        ]
    )


def test_local_spill_matches_the_spill_card_on_ncu_local_bytes_and_sass_ldl_stl(
    kernels: KnowledgeMatchData,
) -> None:
    ncu = _cards(kernels, "local_spill")
    spill = ncu[SPILL]
    # Means over the 3 launches of ncu's l1tex local sectors x 32 bytes.
    assert spill["ncu.launch:local_load_bytes"].value == pytest.approx(134_222_336.0)
    assert spill["ncu.launch:local_store_bytes"].value == pytest.approx(4_294_223_829.33, rel=1e-9)
    sass = _cards(kernels, "_Z11local_spillPKfPfi")
    assert sass[SPILL]["sass.function:local_store_count"].value == 16
    assert sass[SPILL]["sass.function:local_load_count"].value == 2
    assert TENSOR not in ncu and TENSOR not in sass


def test_ptxas_says_local_spill_is_a_local_array_not_a_register_spill(kernels: KnowledgeMatchData) -> None:
    ptxas = next(
        s for s in kernels.subjects if s.evidence.endswith("ptxas_v_sm90.txt") and "local_spill" in s.name
    )
    assert SPILL not in {c.card for c in ptxas.cards}  # 0 bytes spill stores, 256 bytes stack frame


def test_wmma_gemm_matches_the_tensor_core_card_on_hmma(kernels: KnowledgeMatchData) -> None:
    sass = _cards(kernels, "_Z9wmma_gemmPK6__halfS1_Pfiii")
    assert sass[TENSOR]["sass.function:tensor_core_count"].value == 10  # HMMA.16816.F32
    ncu = _cards(kernels, "wmma_gemm")
    assert ncu[TENSOR]["ncu.launch:tensor_hmma_pipe_active_pct"].value == pytest.approx(4.6502, abs=1e-3)
    assert SPILL not in sass and SPILL not in ncu


def test_vec_add_matches_neither(kernels: KnowledgeMatchData) -> None:
    for name in ("vec_add", "_Z7vec_addPK6float4S1_PS_i"):
        cards = _cards(kernels, name)
        assert SPILL not in cards and TENSOR not in cards, name
    assert _cards(kernels, "_Z7vec_addPK6float4S1_PS_i") == {}


def test_the_fast_math_card_ignores_the_reciprocal_of_integer_division(
    kernels: KnowledgeMatchData, shared: Path
) -> None:
    # kernels.cu has no float math: its only MUFUs are the MUFU.RCP of nvcc's integer division
    # (local_spill's `%`, strided_copy's 32- and 64-bit `/` and `%`).
    for name in ("_Z11local_spillPKfPfi", "_Z12strided_copyPKfPfii"):
        subject = next(s for s in kernels.subjects if s.name == name and s.kind == "function")
        assert FAST_MATH not in {c.card for c in subject.cards}, name
    listing = sass.scan(str(shared / "h200/sass/kernels_sm90.cuobjdump.sass")).functions
    functions = {
        f["function"]: (f["special_function_count"], f["integer_division_rcp_count"])
        for f in listing.iter_rows(named=True)
    }
    assert functions["_Z11local_spillPKfPfi"] == (1, 1)
    assert functions["_Z12strided_copyPKfPfii"] == (2, 2)


def test_the_fast_math_card_holds_on_a_fast_math_kernel() -> None:
    # expf, logf, sinf, cosf, rsqrtf and a float division under -use_fast_math: six MUFUs, none of them
    # an integer division's.
    data = knowledge.match([FAST_MATH_SASS])
    [subject] = data.subjects
    [signal] = [c.signals for c in subject.cards if c.card == FAST_MATH]
    [fact] = signal
    assert (fact.fact, fact.value, fact.op, fact.other, fact.threshold) == (
        "sass.function:special_function_count",
        6.0,
        ">",
        "sass.function:integer_division_rcp_count",
        0.0,
    )


def test_thresholds_carry_their_value_and_source(kernels: KnowledgeMatchData) -> None:
    subject = next(s for s in kernels.subjects if s.name == "vec_add")
    card = next(c for c in subject.cards if c.card == "diagnostic.memory_throughput_bound")
    value, versus = card.signals
    assert versus.other == "ncu.launch:sm_throughput_pct" and versus.threshold == pytest.approx(
        13.5242, abs=1e-4
    )
    assert value.threshold == 60 and value.op == ">=" and value.value == pytest.approx(84.57, abs=0.01)
    assert value.threshold_source is not None
    assert value.threshold_source.locator == "Sections and Rules > GPU Speed Of Light Throughput"


def _device(data: KnowledgeMatchData) -> Subject:
    return next(s for s in data.subjects if s.kind == "device")


def test_cuda_graph_capture_never_reads_as_not_using_graphs(shared: Path) -> None:
    data = knowledge.match([shared / "h200/graphs/graph_graph.sqlite"])
    assert data.evidence[0].trace_shape["has_cuda_graphs"] is True
    cards = {c.card: c for c in _device(data).cards}
    assert GRAPHS not in cards
    graph_calls = cards["contract.cuda_graph_trace_granularity"].signals[0]
    assert (graph_calls.fact, graph_calls.rows, graph_calls.value) == (
        "nsys.api:num_calls",
        "cudaGraphLaunch",
        12,
    )
    # The launch card compares the kernels launched one by one with their own launch calls. Here 148
    # ordinary kernels run 3,072 ns (median) for an 8,440 ns call and wait 1,850 ns in the queue: they are
    # launch-bound, and the card holds for them. (It once divided kernel_busy_ns, which counts the 12 graph
    # executions too, by the ordinary kernels: 20,447 ns per kernel, and the card did not hold.)
    launch = {v.fact: (v.value, v.threshold) for v in cards[LAUNCH].signals}
    assert launch == {
        "nsys.device:busy_pct": (pytest.approx(22.8354, abs=1e-4), 50.0),
        "nsys.device:launch.queue_delay.median_ns": (1850.0, 8440.0),
        "nsys.device:launch.kernel_time.median_ns": (3072.0, 8440.0),
    }


def test_eager_capture_with_queued_launches_is_not_launch_bound(shared: Path) -> None:
    """eager.sqlite's kernels wait 334,717 ns (median) in the queue after their launch call: the host runs
    ahead of the GPU, so neither the launch-overhead nor the CUDA-graph card holds."""
    data = knowledge.match([shared / "h200/nsys/eager.sqlite"])
    assert data.evidence[0].trace_shape == {
        "has_cuda_graphs": False,
        "multi_device": False,
        "has_nccl": False,
        "has_nvtx": True,
    }
    cards = {c.card: c for c in _device(data).cards}
    assert LAUNCH not in cards and GRAPHS not in cards
    starved = {v.fact: v.value for v in cards["diagnostic.data_pipeline_starvation"].signals}
    assert starved == {
        "nsys.device:busy_pct": pytest.approx(1.20388, abs=1e-5),
        "nsys.device:gaps.max_ns": 626_527_704,
    }


def test_eager_decode_capture_matches_cuda_graph_and_launch_overhead_cards(shared: Path) -> None:
    cards = {c.card for c in _device(knowledge.match([shared / DECODE_EAGER])).cards}
    assert {GRAPHS, LAUNCH} <= cards


def test_match_cli_json_envelope(shared: Path) -> None:
    run = gpuopt("knowledge", "match", str(shared / "h200/ncu/kernels_full.ncu-rep"), "--json")
    assert run.code == 0, run.stderr
    envelope = run.json()
    assert envelope["schema"] == "gpuopt.knowledge.match/v1" and envelope["ok"]
    spill = next(s for s in envelope["data"]["subjects"] if s["name"] == "local_spill")
    assert {c["card"] for c in spill["cards"]} >= {SPILL}
    assert envelope["provenance"]["inputs"][0]["blake3"]


def test_unknown_evidence_is_exit_2(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\nworld\n")
    run = gpuopt("knowledge", "match", str(junk), "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "knowledge_evidence_unknown"
    with pytest.raises(InputError) as err:
        knowledge.match([tmp_path])
    assert err.value.code == "knowledge_evidence_unknown"


# ---- query ---------------------------------------------------------------------------------------------


def _hits(**kw: Any) -> dict[str, Any]:
    return {h.card.id: h for h in knowledge.query(**kw).hits}


def test_phenomena_match_by_normalisation_aliases_and_ncu_metric_base_names() -> None:
    hits = _hits(
        phenomena=[
            "Register Spills",
            "memory_bound",
            "sm__pipe_tensor_op_hmma_cycles_active.pct_of_peak",
            "LAUNCH-BOUND",
        ]
    )
    why = {cid: [(m.query, m.matched, m.via) for m in h.matches] for cid, h in hits.items()}
    assert why[SPILL] == [("Register Spills", "register spill", "alias")]
    assert why["diagnostic.memory_throughput_bound"] == [("memory_bound", "memory bound", "alias")]
    assert why[TENSOR] == [
        (
            "sm__pipe_tensor_op_hmma_cycles_active.pct_of_peak",
            "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
            "ncu_metric",
        )
    ]
    assert why[LAUNCH] == [("LAUNCH-BOUND", "launch bound", "alias")]
    # Endings are dropped on both sides, so __launch_bounds__ (an alias of the register-limit card) matches
    # too, and says so; word matching is not used since every phenomenon matched exactly.
    assert why["diagnostic.register_limit"] == [("LAUNCH-BOUND", "launch bounds", "alias")]
    assert len(hits) == 5


def test_word_matching_only_for_phenomena_without_an_exact_match() -> None:
    hits = _hits(phenomena=["spilling registers"])
    assert list(hits) == [SPILL]
    assert [(m.via, m.matched) for m in hits[SPILL].matches] == [("tokens", SPILL)]


def test_fact_names_match_their_cards() -> None:
    hits = _hits(phenomena=["local_load_bytes"])
    assert [(m.via, m.matched) for m in hits[SPILL].matches] == [("fact", "local_load_bytes")]


def test_applicability_exact_architectures_and_versions() -> None:
    wgmma = "mechanism.hopper_warpgroup_mma"
    on_90 = _hits(mechanisms=[wgmma], arch="sm_90")[wgmma].applicability
    assert on_90.relation == "incompatible"
    assert [(r.field, r.kind, r.expected, r.actual) for r in on_90.reasons] == [
        ("arch", "mismatch", "sm_90a", "sm_90")
    ]
    assert _hits(mechanisms=[wgmma], arch="sm_90a")[wgmma].applicability.relation == "compatible"
    tma = "mechanism.tma_tensor_copy"
    old = _hits(mechanisms=[tma], arch="sm_80", cuda="11.8")[tma].applicability
    assert [(r.field, r.kind, r.expected, r.actual) for r in old.reasons] == [
        ("compute_capability", "mismatch", ">= 9.0", "8.0 (sm_80)"),
        ("cuda", "mismatch", "12.0 .. *", "11.8"),
    ]
    assert _hits(mechanisms=[tma], arch="sm_100a", cuda="13.0")[tma].applicability.relation == "compatible"
    graphs = _hits(mechanisms=[GRAPHS])[GRAPHS].applicability
    assert [(r.field, r.kind, r.actual) for r in graphs.reasons] == [("cuda", "limitation", None)]
    unstated = _hits(mechanisms=["torch_compile"])["mechanism.torch_compile"].applicability
    assert unstated.relation == "related"
    assert unstated.reasons[0].model_dump() == {
        "field": "frameworks.torch",
        "kind": "limitation",
        "expected": "2.0 .. *",
        "actual": None,
    }
    ok = _hits(mechanisms=["torch_compile"], frameworks={"torch": "2.11.0+cu130"})["mechanism.torch_compile"]
    assert ok.applicability.relation == "compatible"


def test_incompatible_cards_are_listed_last_not_dropped() -> None:
    hits = knowledge.query(phenomena=["tensor cores", "wgmma", "tcgen05"], arch="sm_90").hits
    relations = [h.applicability.relation for h in hits]
    assert relations == sorted(relations, key=["compatible", "related", "incompatible"].index)
    assert "incompatible" in relations


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--arch", "sm_91"], "knowledge_arch_unknown"),
        (["--arch", "sm_80a"], "knowledge_arch_unknown"),
        (["--arch", "ampere"], "knowledge_arch_unknown"),
        (["--cuda", "thirteen"], "knowledge_version_invalid"),
        (["--framework", "torch"], "usage_invalid"),
        (["--mechanism", "warp_magic"], "knowledge_card_unknown"),
    ],
)
def test_query_bad_input_is_exit_2(args: list[str], code: str) -> None:
    run = gpuopt("knowledge", "query", *args, "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == code


def test_query_cli_people_and_json() -> None:
    run = gpuopt("knowledge", "query", "--mechanism", "cuda_graphs", "--cuda", "13.0")
    assert run.code == 0 and "mechanism.cuda_graphs" in run.stdout and "CUDA Graphs" in run.stdout
    env = gpuopt("knowledge", "query", "--phenomenon", "launch overhead", "--json").json()
    assert env["ok"] and env["data"]["hits"][0]["card"]["id"] == LAUNCH


# ---- Target identity and audit versions -----------------------------------------------------------------


@pytest.fixture(scope="module")
def example_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real frozen Target: the bundled CPU example's readiness check (a 2-sample smoke call)."""
    from gpuopt.example.runner import Runner

    folder = tmp_path_factory.mktemp("ex") / "demo"
    runner = Runner(folder, gpu=False, progress=lambda _: None)
    runner.prepare()
    runner.readiness()
    return folder / "root"


def test_query_identity_from_the_frozen_target(example_root: Path) -> None:
    data = knowledge.query(mechanisms=["torch_compile"], target=example_root)
    assert data.identity.source.startswith("target:tgt-")
    assert data.identity.arch is None and "numpy" in data.identity.frameworks  # a CPU Target


@pytest.fixture(scope="module")
def doctor_record(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    run = gpuopt("doctor", "--nvidia-smi-xml", str(shared / "h200/env/nvidia-smi-q.xml"), "--json")
    assert run.code == 0, run.stderr
    return run.json()  # type: ignore[no-any-return]


def _write(folder: Path, name: str, doc: dict[str, Any]) -> Path:
    path = folder / name
    path.write_text(json.dumps(doc))
    return path


def test_audit_one_component_changed_is_single_variable(
    doctor_record: dict[str, Any], tmp_path: Path
) -> None:
    after = json.loads(json.dumps(doctor_record))
    after["data"]["nvidia"]["driver_version"] = "590.10.01"
    a = _write(tmp_path, "a.json", doctor_record)
    b = _write(tmp_path, "b.json", after)
    run = gpuopt("audit", "versions", str(a), str(b), "--json")
    assert run.code == 0, run.stderr
    data = run.json()["data"]
    assert data["single_variable"] is True and data["reasons"] == []
    assert data["stack_changes"] == [{"component": "nvidia.driver", "a": "580.159.04", "b": "590.10.01"}]
    assert "gpu.GPU-317e9c49-8e0b-74cb-dec2-b011495278ae.name" in data["frozen_checked"]


def test_audit_two_changes_a_frozen_change_and_no_change(
    doctor_record: dict[str, Any], tmp_path: Path
) -> None:
    two = json.loads(json.dumps(doctor_record))
    two["data"]["nvidia"]["driver_version"] = "590.10.01"
    two["data"]["python"]["version"] = "3.13.1"
    two["data"]["nvidia"]["gpus"][0]["power_limit_enforced_w"] = 600.0
    a = _write(tmp_path, "a.json", doctor_record)
    data = knowledge.audit_versions(a, _write(tmp_path, "b.json", two))
    assert data.single_variable is False
    assert data.reasons == [
        "frozen_mismatch:gpu.GPU-317e9c49-8e0b-74cb-dec2-b011495278ae.power_limit_w",
        "more_than_one_component_changed:2",
    ]
    same = knowledge.audit_versions(a, _write(tmp_path, "c.json", doctor_record["data"]))
    assert same.reasons == ["software_stack_did_not_change"]


def test_audit_target_against_itself_and_against_doctor(
    example_root: Path, doctor_record: dict[str, Any], tmp_path: Path
) -> None:
    same = knowledge.audit_versions(example_root, example_root / "target.json")
    assert (same.a_kind, same.b_kind, same.keys_compared) == ("target", "target", "all")
    assert "target.test_set" in same.frozen_checked and same.reasons == ["software_stack_did_not_change"]
    mixed = knowledge.audit_versions(_write(tmp_path, "d.json", doctor_record), example_root)
    assert mixed.keys_compared == "common" and "target.test_set" not in mixed.frozen_checked


def test_audit_bad_records_are_exit_2(tmp_path: Path) -> None:
    garbage = _write(tmp_path, "g.json", {"hello": 1})
    run = gpuopt("audit", "versions", str(garbage), str(garbage), "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "audit_record_invalid"
    text = tmp_path / "t.json"
    text.write_text("not json")
    assert gpuopt("audit", "versions", str(text), str(text)).code == 2


def test_torch_traces_shape_and_host_wait(shared: Path) -> None:
    data = knowledge.match([shared / "h200/graphs/graph_trace.json", shared / "h200/torch/eager_trace.json"])
    graph, eager = data.evidence
    assert graph.trace_shape["has_cuda_graphs"] is True and eager.trace_shape["has_cuda_graphs"] is False
    replay, plain = (s for s in data.subjects if s.kind == "device")
    assert (replay.name, plain.name) == ("rank 0 device 0", "rank 0 device 0")
    (starved,) = replay.cards
    (host_wait,) = starved.signals
    assert starved.card == "diagnostic.data_pipeline_starvation"
    assert (host_wait.fact, host_wait.per) == (
        "torch.device:idle_by_cause.host_wait_ns",
        "torch.device:temporal.window_ns",
    )
    assert host_wait.value == pytest.approx(HOST_WAIT_NS / WINDOW_NS) and host_wait.threshold == 0.5
    assert plain.cards == []  # the eager trace's GPU waits on the host for 700,604 of 4,571,368 ns


def test_torch_ops_whose_host_time_exceeds_their_gpu_time(shared: Path) -> None:
    data = knowledge.match([shared / "h200/torch/eager_trace.json"])
    ops = {s.name: s for s in data.subjects if s.kind == "op"}
    assert len(ops) == 28
    held = {name: s.cards[0] for name, s in ops.items() if s.cards}
    assert set(held) == {"rank 0 aten::copy_", "rank 0 aten::_local_scalar_dense", "rank 0 aten::sum"}
    scalar = {v.fact: v for v in held["rank 0 aten::_local_scalar_dense"].signals}
    assert held["rank 0 aten::_local_scalar_dense"].card == LAUNCH
    assert (
        scalar["torch.op:self_cpu_ns"].value == 25_772 and scalar["torch.op:self_cpu_ns"].threshold == 6_015
    )
    assert ops["rank 0 aten::mm"].cards == [] and ops["rank 0 aten::mm"].rows == 24


def test_query_cli_reads_identity_from_target(example_root: Path) -> None:
    run = gpuopt("knowledge", "query", "--target", str(example_root), "--mechanism", "cuda_graphs", "--json")
    assert run.code == 0, run.stderr
    identity = run.json()["data"]["identity"]
    assert identity["source"].startswith("target:tgt-") and identity["frameworks"]["numpy"]
