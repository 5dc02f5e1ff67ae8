"""Every nsys fixture (h200 and public; export schemas 3.16.1 to 3.25.0) loads and gives consistent facts."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gpuopt import nsys

# file -> (schema, product version, gpu source, kernels, runtime calls, NVTX range events)
FIXTURES = {
    "h200/nsys/eager.sqlite": ("3.20.3", "2025.3.2.0", "TARGET_INFO_GPU", 176, 2573, 29),
    "public/nsys/fuser_2024.6.2.sqlite": ("3.16.1", "2024.6.2.25", "TARGET_INFO_GPU", 19, 968, 652),
    "public/nsys/fuser_h200_2025.1.1.sqlite": ("3.17.1", "2025.1.1.110", "TARGET_INFO_GPU", 18, 990, 13513),
    "public/nsys/mock.sqlite": ("3.24.14", "2026.1.1.204", "TARGET_INFO_GPU", 2, 9, 0),
    "public/nsys/h100_2gpu_1s.sqlite": ("3.25.0", "2026.2.1.210", None, 3442, 5796, 16782),
    "public/nsys/mfu_2gpu_before.sqlite": ("3.25.0", "2026.2.1.210", None, 4010, 7466, 19118),
    "public/nsys/mfu_2gpu_after.sqlite": ("3.25.0", "2026.2.1.210", None, 3587, 6682, 17113),
}


def test_every_nsys_fixture_is_listed(shared: Path) -> None:
    found = {str(p.relative_to(shared)) for p in shared.glob("*/nsys/*.sqlite")}
    assert found == set(FIXTURES)


def _sql(path: Path, query: str) -> tuple[int, ...]:
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return tuple(con.execute(query).fetchone())
    except sqlite3.OperationalError:  # table absent in this capture
        return (0, 0)
    finally:
        con.close()


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixture_loads_with_consistent_facts(shared: Path, name: str) -> None:
    schema, product, gpu_source, kernels, calls, ranges = FIXTURES[name]
    path = shared / name
    report = nsys.open(path)
    info = report.info()
    assert (info.export.schema_version, info.export.product_version) == (schema, product)
    assert info.gpu_source == gpu_source
    assert info.nvtx_ranges == ranges

    kern = report.kernel_summary()
    assert kern["instances"].sum() == kernels
    assert (
        kern["total_time_ns"].sum()
        == _sql(path, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0]
    )
    api = report.api_summary()
    assert api["num_calls"].sum() == calls
    assert (
        api["total_time_ns"].sum()
        == _sql(path, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_RUNTIME")[0]
    )

    mem = report.stats("cuda_gpu_mem_size_sum")
    copies = _sql(path, "SELECT count(*), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY")
    sets = _sql(path, "SELECT count(*), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMSET")
    assert mem["count"].sum() == copies[0] + sets[0]
    assert (mem["total_bytes"].sum() or 0) == (copies[1] or 0) + (sets[1] or 0)

    nvtx_sum = report.stats("nvtx_sum")
    assert nvtx_sum["instances"].sum() == ranges

    t = report.timeline()
    assert sum(d.kernels for d in t.devices) == kernels
    for d in t.devices:
        assert d.idle_ns == d.span_ns - d.busy_ns == d.gaps.total_ns
        assert sum(s.kernels for s in d.streams) == d.kernels
    matched = _sql(
        path,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
        "ON k.correlationId = r.correlationId AND k.globalPid = (r.globalTid & -16777216)",
    )[0]
    assert sum(x.matched for x in t.launch) == matched
    exec_sum = report.stats("cuda_kern_exec_sum")
    assert exec_sum["count"].sum() == matched

    kern_nvtx = report.stats("nvtx_kern_sum")
    if report.not_captured("nvtx_kern_sum"):
        # nsys skips the report without NVTX data (tests/test_nsys_oracle_public.py shows its output).
        assert kern_nvtx.height == 0
    else:
        # Kernels outside every range form rows with a null range; all kernels appear at least once.
        assert kern_nvtx["kernel_instances"].sum() >= kernels
    for method in (report.memory, report.gaps, report.nvtx):
        method()


def test_two_gpu_capture_has_two_devices_and_no_target_info(shared: Path) -> None:
    report = nsys.open(shared / "public/nsys/h100_2gpu_1s.sqlite")
    t = report.timeline()
    assert [d.device_id for d in t.devices] == [0, 1]
    assert [d.kernels for d in t.devices] == [1721, 1721]
    assert report.info().gpus == []
    # Kernels whose launch fell outside the derived 1-s window have no API call.
    assert sum(x.kernels - x.matched for x in t.launch) == 1810
    assert t.profiler_overhead.recorded


def test_registered_nvtx_strings_resolve(shared: Path) -> None:
    """mfu fixtures mix inline text and registered textId strings (two NVTX domains)."""
    path = shared / "public/nsys/mfu_2gpu_before.sqlite"
    report = nsys.open(path)
    texts = {
        r[0]
        for r in sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True).execute(
            "SELECT s.value FROM NVTX_EVENTS n JOIN StringIds s ON n.textId = s.id"
        )
    }
    ranges = set(report.stats("nvtx_sum")["range"].to_list())
    assert texts and {":" + t for t in texts} <= ranges
