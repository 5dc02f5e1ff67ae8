"""The PyTorch trace engine on the real fixtures: counts, links, tables and breakdowns, exact numbers.

The H200 numbers were cross-checked against a brute-force Python reading of the same JSON with
``decimal.Decimal`` timestamps (containment by pairwise comparison, unions by sorting).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from gpuopt import torch_trace
from gpuopt.errors import InputError

H200 = "h200/torch/eager_trace.json"
PUBLIC = "public/torch"


@pytest.fixture(scope="module")
def h200(shared: Path) -> torch_trace.TorchTrace:
    return torch_trace.open(shared / H200)


def test_h200_counts_and_identity(h200: torch_trace.TorchTrace) -> None:
    (t,) = h200.summary().traces
    assert (t.platform, t.format, t.global_rank, t.global_rank_source) == (
        "cuda",
        "kineto",
        0,
        "single_trace",
    )
    c = t.counts
    assert (c.events, c.complete, c.metadata, c.flows, c.instant) == (975, 703, 58, 212, 2)
    assert (c.cpu_ops, c.annotations, c.runtime_calls, c.driver_calls) == (483, 3, 89, 30)
    assert (c.kernels, c.memcpys, c.memsets, c.gpu_annotations) == (66, 6, 21, 3)
    h = t.header
    assert (h.schema_version, h.cupti_version, h.cuda_runtime_version, h.base_time_ns) == (
        1,
        130001,
        13000,
        1790857026000000000,
    )
    assert h.distributed is None
    (device,) = h.devices
    assert (device.name, device.compute_capability, device.multiprocessors) == ("NVIDIA H200", "9.0", 132)
    # The first kept event is step_0 at ts 5352965319261.292 µs: exact integer ns.
    assert t.origin_ns == 5352965319261292
    assert t.duration_ns == 6686382


def test_h200_every_gpu_event_has_a_runtime_caller_and_an_op(h200: torch_trace.TorchTrace) -> None:
    links = h200.summary().traces[0].links
    assert (links.gpu_events, links.gpu_linked_to_runtime, links.gpu_unlinked, links.gpu_linked_to_op) == (
        93,
        93,
        0,
        93,
    )
    # Two cudaDeviceSynchronize calls sit outside every op; all others are inside one, and their
    # External id agrees with the enclosing op's.
    assert (links.runtime_calls, links.runtime_op_by_containment, links.runtime_without_op) == (119, 117, 2)
    assert (links.external_id_agree, links.external_id_disagree) == (117, 0)
    assert (links.flow_points, links.flow_points_matching) == (212, 212)
    launches = h200.launches()
    assert launches.filter(pl.col("kind") == "kernel")["runtime_name"].null_count() == 0
    assert set(launches["runtime_name"]) == {
        "cudaLaunchKernel",
        "cuLaunchKernelEx",
        "cudaMemcpyAsync",
        "cudaMemsetAsync",
    }


def test_h200_kernel_table(h200: torch_trace.TorchTrace) -> None:
    k = h200.kernels()
    assert k.height == 7
    assert k["count"].sum() == 66
    top = k.row(0, named=True)
    assert top["name"] == "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"
    assert (top["count"], top["total_ns"], top["min_ns"], top["max_ns"], top["median_ns"]) == (
        24,
        1657625,
        24928,
        96768,
        78688.0,
    )
    assert top["kind"] == "compute"
    assert k["share_pct"].sum() == pytest.approx(100.0)
    assert k["total_ns"].sum() == h200.summary().traces[0].gpu.kernel_time_ns  # type: ignore[union-attr]


def test_h200_breakdowns_sum_to_the_window(h200: torch_trace.TorchTrace) -> None:
    gpu = h200.summary().traces[0].gpu
    assert gpu is not None
    (d,) = gpu.devices
    tb = d.temporal
    assert (tb.window_ns, tb.compute_ns, tb.communication_ns, tb.memory_ns, tb.idle_ns) == (
        4571368,
        2776630,
        0,
        938108,
        856630,
    )
    assert tb.compute_ns + tb.communication_ns + tb.memory_ns + tb.idle_ns == tb.window_ns
    idle = d.idle_by_cause
    assert (idle.host_wait_ns, idle.kernel_wait_ns, idle.other_ns) == (700604, 156026, 0)
    assert idle.host_wait_ns + idle.kernel_wait_ns + idle.other_ns == tb.idle_ns
    assert [(x.kind, x.time_ns) for x in d.kernel_types] == [("compute", 2776630), ("memory", 938108)]
    assert sum(x.time_ns for x in d.kernel_types) == d.busy_ns == tb.window_ns - tb.idle_ns
    streams = h200.streams()
    assert streams.select("stream", "busy_ns", "idle_ns", "gaps").row(0) == (7, 3714738, 856630, 92)
    assert h200.gaps()["duration_ns"].sum() == 856630


def test_h200_ops_self_and_launched_gpu_time(h200: torch_trace.TorchTrace) -> None:
    ops = {r["name"]: r for r in h200.ops().iter_rows(named=True)}
    copy = ops["aten::copy_"]
    assert (copy["count"], copy["total_cpu_ns"], copy["self_cpu_ns"]) == (6, 1938113, 1865010)
    assert (copy["gpu_events"], copy["gpu_time_ns"], copy["runtime_calls"]) == (6, 983066, 9)
    linear = ops["aten::linear"]
    # linear launches nothing itself; the addmm/mm nested in it do.
    assert (linear["count"], linear["self_cpu_ns"], linear["gpu_events"]) == (24, 51632, 0)
    assert (linear["gpu_events_total"], linear["gpu_time_total_ns"]) == (36, 1667194)
    assert h200.ops()["gpu_events"].sum() == 93
    assert (h200.ops().height, h200.launches().height, h200.transfers().height, h200.gaps().height) == (
        28,
        93,
        27,
        92,
    )


def test_h200_steps_own_the_gpu_work_they_launched(h200: torch_trace.TorchTrace) -> None:
    steps = h200.steps()
    assert steps.select("name", "gpu_events", "gpu_time_ns", "cpu_duration_ns").rows() == [
        ("step_0", 31, 1243418, 3825452),
        ("step_1", 31, 1234683, 1365258),
        ("step_2", 31, 1236637, 1357349),
    ]
    # The GPU-side annotation of step_0 (gpu_user_annotation, same External id).
    assert steps["gpu_annotation_ns"].to_list() == [1763384, 1285019, 1290459]
    assert set(steps["kind"]) == {"record_function"}


def test_h200_transfers_and_launch_latency(h200: torch_trace.TorchTrace) -> None:
    gpu = h200.summary().traces[0].gpu
    assert gpu is not None
    by_name = {(x.kind, x.name): x for x in gpu.transfers}
    htod = by_name[("memcpy", "Memcpy HtoD (Pinned -> Device)")]
    assert (htod.count, htod.bytes) == (3, 3 * 16777216)
    assert by_name[("memset", "Memset (Device)")].count == 21
    first = h200.launches().row(0, named=True)
    # cudaMemcpyAsync starts at 1970062 ns, lasts 25593 ns; the copy starts at 1995672 ns.
    assert (first["call_start_ns"], first["start_ns"], first["op_name"]) == (1970062, 1995672, "aten::copy_")
    assert (first["latency_from_call_start_ns"], first["latency_from_call_end_ns"]) == (25610, 17)
    assert first["bytes"] == 16777216
    lat = gpu.launch_latency
    assert lat is not None
    assert (lat.from_call_start.count, lat.from_call_start.min_ns, lat.from_call_end.min_ns) == (
        66,
        7521,
        -418,
    )


def test_unmodeled_content_is_reported(h200: torch_trace.TorchTrace) -> None:
    items = {(u.kind, u.name): u.count for u in h200.unmodeled()}
    assert items[("event_category", "overhead")] == 1
    assert items[("event_category", "Trace")] == 1
    # record_shapes arguments are read (gpuopt torch flops); Input Strides is not.
    assert ("event_arg", "Input Dims") not in items
    assert items[("event_arg", "Input Strides")] == 483
    assert items[("metadata", "process_sort_index")] == 18


@pytest.mark.parametrize(
    ("name", "platform", "gpu_events"),
    [
        ("hta_amd_trace_mi250_minitoy_train_ROCm6_2_kineto.json.gz", "rocm", 16),
        ("hta_mtia_inference_trace_mtia_inference_rank_0.json.gz", "mtia", 0),
        ("hta_cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", "cpu_only", 0),
        ("hta_triton_example_triton_example.json.gz", "cuda", 1),
    ],
)
def test_platforms_are_identified(shared: Path, name: str, platform: str, gpu_events: int) -> None:
    trace = torch_trace.open(shared / PUBLIC / name)
    (t,) = trace.summary().traces
    assert t.platform == platform
    assert t.links.gpu_events == gpu_events
    if gpu_events == 0:
        assert t.gpu is None
        assert t.gpu_absent is not None and t.gpu_absent.startswith("not present:")
        assert trace.kernels().height == 0
        assert trace.not_present() == [f"rank {t.global_rank}: {t.gpu_absent}"]
    else:
        assert t.gpu is not None and t.gpu_absent is None


def test_mtia_categories_are_unmodeled_not_guessed(shared: Path) -> None:
    trace = torch_trace.open(shared / PUBLIC / "hta_mtia_inference_trace_mtia_inference_rank_0.json.gz")
    items = {(u.kind, u.name): u.count for u in trace.unmodeled()}
    assert items[("event_category", "mtia_runtime")] == 823
    assert items[("event_category", "mtia_ccp_events")] == 1313


def test_cpu_only_trace_has_rank_from_distributed_info(shared: Path) -> None:
    trace = torch_trace.open(shared / PUBLIC / "hta_cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")
    (t,) = trace.summary().traces
    assert (t.global_rank, t.global_rank_source) == (34, "distributedInfo")
    assert t.header.distributed is not None and t.header.distributed.world_size == 300
    assert trace.ops()["count"].sum() == 4


def test_legacy_2021_format_links_and_counts_unlinked(shared: Path) -> None:
    trace = torch_trace.open(shared / PUBLIC / "kineto_resnet50_legacy.json.gz")
    (t,) = trace.summary().traces
    assert t.format == "kineto_2021"
    assert (t.counts.cpu_ops, t.counts.runtime_calls, t.counts.kernels) == (33384, 10920, 9564)
    # 733 GPU events were launched before the trace began: counted, not dropped.
    assert (t.links.gpu_events, t.links.gpu_unlinked) == (10015, 733)
    assert trace.kernels()["count"].sum() == 9564
    assert trace.launches()["runtime_name"].null_count() == 733


def test_nccl_collectives_with_sizes_and_overlap(shared: Path) -> None:
    trace = torch_trace.open(shared / PUBLIC / "hta_nccl_parser_config_nccl_data.json.gz")
    coll = trace.collectives()
    assert coll.height == 21
    assert coll.group_by("collective").len().sort("collective").rows() == [
        ("allreduce", 15),
        ("broadcast", 6),
    ]
    first = coll.row(0, named=True)
    assert (first["collective"], first["dtype"], first["in_nelems"], first["bytes_in"]) == (
        "broadcast",
        "Float",
        53120,
        53120 * 4,
    )
    assert first["args_source"] == "kernel"
    gpu = trace.summary().traces[0].gpu
    assert gpu is not None and gpu.collectives is not None
    assert gpu.collectives.kernels == 21
    assert gpu.collectives.compute_overlap_ns == coll["compute_overlap_ns"].sum()
    (d,) = gpu.devices
    assert sum(x.time_ns for x in d.kernel_types if "communication" in x.kind) == gpu.collectives.busy_ns


def test_multi_stream_breakdowns_sum_exactly(shared: Path) -> None:
    trace = torch_trace.open(shared / PUBLIC / "hta_trace_filter_sampled_rank-1.json.gz")
    (t,) = trace.summary().traces
    assert t.global_rank == 1
    assert t.gpu is not None
    (d,) = t.gpu.devices
    tb = d.temporal
    assert d.streams == 5
    # Compute, communication and memory overlap here; each class is counted once, in that priority.
    assert {x.kind for x in d.kernel_types} >= {"compute", "communication", "compute+communication"}
    assert tb.compute_ns + tb.communication_ns + tb.memory_ns + tb.idle_ns == tb.window_ns
    idle = d.idle_by_cause
    assert idle.host_wait_ns + idle.kernel_wait_ns + idle.other_ns == tb.idle_ns
    assert sum(x.time_ns for x in d.kernel_types) == d.busy_ns
    streams = trace.streams()
    assert (
        streams["host_wait_ns"] + streams["kernel_wait_ns"] + streams["other_idle_ns"] == streams["idle_ns"]
    ).all()


def test_folder_of_ranks_is_ordered_by_rank(shared: Path, tmp_path: Path) -> None:
    for name in ("hta_trace_filter_sampled_rank-1.json.gz", "hta_timeline_analysis_sampled_rank-0.json.gz"):
        shutil.copy(shared / PUBLIC / name, tmp_path / name)
    (tmp_path / "notes.txt").write_text("not a trace")
    trace = torch_trace.open(tmp_path)
    assert [o.global_rank for o in trace.overview()] == [0, 1]
    assert sorted(set(trace.kernels()["rank"])) == [0, 1]


def test_folder_without_rank_info_uses_file_order(shared: Path, tmp_path: Path) -> None:
    for name in ("a.json", "b.json"):
        shutil.copy(shared / H200, tmp_path / name)
    (t0, t1) = torch_trace.open(tmp_path).summary().traces
    assert [(t0.global_rank, t0.global_rank_source), (t1.global_rank, t1.global_rank_source)] == [
        (0, "file_order"),
        (1, "file_order"),
    ]


def test_folder_with_a_rank_twice_is_an_error(shared: Path, tmp_path: Path) -> None:
    name = "hta_trace_filter_sampled_rank-1.json.gz"
    shutil.copy(shared / PUBLIC / name, tmp_path / "a.json.gz")
    shutil.copy(shared / PUBLIC / name, tmp_path / "b.json.gz")
    with pytest.raises(InputError) as info:
        torch_trace.open(tmp_path)
    assert info.value.code == "torch_trace_rank_duplicate"


def test_timestamps_are_exact_decimal_nanoseconds(tmp_path: Path) -> None:
    """1.023 µs is 1023 ns; ``int(1.023 * 1000)`` in floating point would say 1022."""
    assert int(1.023 * 1000) == 1022
    events = [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5352965319261.292, "dur": 1.023,
         "args": {"device": 0, "stream": 7, "correlation": 1}},
    ]  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    k = torch_trace.open(path).kernels()
    assert (k["total_ns"][0], k["min_ns"][0]) == (1023, 1023)
    assert torch_trace.open(path).summary().traces[0].origin_ns == 5352965319261292
