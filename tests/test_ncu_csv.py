"""ncu --csv exports (raw, raw with base units, details, session) read natively: exact fixture values."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from gpuopt import ncu
from gpuopt.errors import FormatError, InputError


@pytest.fixture(scope="module")
def stem(shared: Path) -> Path:
    return shared / "h200" / "ncu" / "kernels_full"


@pytest.fixture(scope="module")
def raw(stem: Path) -> ncu.NcuReport:
    return ncu.open(stem.with_suffix(".raw.csv"))


@pytest.fixture(scope="module")
def base(stem: Path) -> ncu.NcuReport:
    return ncu.open(stem.with_suffix(".raw_base.csv"), session=stem.with_suffix(".session.csv"))


@pytest.fixture(scope="module")
def details(stem: Path) -> ncu.NcuReport:
    return ncu.open(stem.with_suffix(".details.csv"))


def row(report: ncu.NcuReport, launch_id: int) -> dict[str, object]:
    rows = report.launches.filter(pl.col("launch_id") == launch_id).to_dicts()
    assert len(rows) == 1
    return rows[0]


def test_raw_page_one_row_per_launch_with_identity(raw: ncu.NcuReport) -> None:
    launches = raw.launches
    assert launches.height == 12
    assert launches["launch_id"].to_list() == list(range(12))
    assert launches["kernel_function"].to_list()[:4] == [
        "vec_add",
        "strided_copy",
        "local_spill",
        "wmma_gemm",
    ]
    first = row(raw, 0)
    assert first["kernel_name"] == "vec_add(const float4 *, const float4 *, float4 *, int)"
    assert first["process_id"] == 562
    assert first["process_name"] == "kernels_bin"
    assert (first["grid_x"], first["grid_y"], first["grid_z"]) == (16384, 1, 1)
    assert (first["block_x"], first["block_y"], first["block_z"]) == (256, 1, 1)
    assert first["device_name"] == "NVIDIA H200"
    assert first["compute_capability"] == "9.0"
    assert first["arch"] == "sm_90"
    assert first["source_format"] == "ncu-csv-raw"
    assert first["tool_version"] is None  # a raw page does not say; the session page does
    wmma = row(raw, 3)
    assert (wmma["grid_x"], wmma["grid_y"], wmma["block_x"], wmma["block_y"]) == (128, 32, 32, 4)


def test_auto_units_are_normalised_to_base_units(raw: ncu.NcuReport, base: ncu.NcuReport) -> None:
    # The raw page in auto units prints the duration in us/ms and memory in Kbyte/Mbyte; base units agree.
    for launch_id in range(12):
        auto, exact = row(raw, launch_id), row(base, launch_id)
        assert auto["duration_ns"] == exact["duration_ns"]
        assert auto["shared_mem_config_bytes"] == exact["shared_mem_config_bytes"] == 32768.0
        assert auto["registers_per_thread"] == exact["registers_per_thread"]
    assert row(base, 0)["duration_ns"] == 45472.0
    assert row(base, 2)["duration_ns"] == 1186752.0
    assert row(base, 0)["sm_frequency_hz"] == 1973079587.44
    assert ncu.unit("ms") == ("ns", 1e6)
    assert ncu.unit("Kbyte/block") == ("byte/block", 1e3)
    assert ncu.unit("GHz") is None


def test_thousands_separators_and_exact_counts(base: ncu.NcuReport) -> None:
    vec_add = row(base, 0)
    assert vec_add["dram_read_bytes"] == 134225152.0  # "134,225,152"
    assert vec_add["dram_write_bytes"] == 48551680.0
    assert vec_add["dram_bytes"] == 182776832.0
    assert vec_add["grid_size"] == 16384.0
    assert vec_add["threads"] == 4194304.0
    assert vec_add["instructions_executed"] == 3014656.0
    assert vec_add["l2_bytes"] == 9533058 * 32.0  # lts__t_sectors.sum x 32-byte sectors


def test_local_spill_launch_shows_local_memory_traffic(base: ncu.NcuReport) -> None:
    for launch_id in (2, 6, 10):
        spill = row(base, launch_id)
        assert spill["kernel_function"] == "local_spill"
        assert spill["local_load_inst"] == 1048576.0
        assert spill["local_store_inst"] == 8388608.0
    spill = row(base, 2)
    assert spill["local_store_bytes"] == 134226588 * 32.0
    assert spill["local_load_bytes"] == 4194424 * 32.0
    for launch_id in (0, 1, 3):
        assert row(base, launch_id)["local_store_inst"] == 0.0


def test_wmma_launch_shows_tensor_pipe_activity(base: ncu.NcuReport) -> None:
    wmma = row(base, 3)
    assert wmma["tensor_pipe_active_pct"] == 4.65
    assert wmma["tensor_hmma_pipe_active_pct"] == 4.65
    for launch_id in (0, 1, 2):
        assert row(base, launch_id)["tensor_pipe_active_pct"] == 0.0


def test_session_page_adds_tool_identity(base: ncu.NcuReport) -> None:
    info = base.info
    assert info.tool.version == "2025.3.1.0"
    assert info.tool.version_source == "session-csv"
    assert info.tool.command_line is not None
    assert "--clock-control none --set full" in info.tool.command_line
    assert info.alias_table_verified is True
    assert row(base, 0)["tool_version"] == "2025.3.1.0"


def test_details_page_labels_map_to_metrics(details: ncu.NcuReport) -> None:
    assert details.info.source_format == "ncu-csv-details"
    vec_add = row(details, 0)
    assert vec_add["duration_ns"] == pytest.approx(45.47e3)  # "45.47" us
    assert vec_add["registers_per_thread"] == 22.0
    assert vec_add["grid_size"] == 16384.0
    assert vec_add["achieved_occupancy_pct"] == 80.11
    assert vec_add["shared_mem_config_bytes"] == pytest.approx(32.77e3)  # "32.77" Kbyte
    # Facts the details page does not carry stay null, never guessed.
    assert vec_add["dram_bytes"] is None
    sources = {s.fact: s.source for s in details.info.fact_sources}
    assert sources["duration_ns"] == "gpu__time_duration.sum"
    assert sources["dram_bytes"] is None


def test_details_rules_and_sections(details: ncu.NcuReport) -> None:
    rules = details.rules
    assert rules.height == 129
    spill = rules.filter((pl.col("launch_id") == 2) & (pl.col("rule") == "UncoalescedGlobalAccess"))
    assert spill["rule_type"].to_list() == ["OPT"]
    assert spill["speedup_type"].to_list() == ["global"]
    assert spill["estimated_speedup_pct"].to_list() == [17.68]
    sections = details.sections.filter(pl.col("launch_id") == 0)
    assert "Launch Statistics" in sections["section"].to_list()


def test_raw_with_details_page_adds_rules(stem: Path) -> None:
    merged = ncu.open(stem.with_suffix(".raw_base.csv"), details=stem.with_suffix(".details.csv"))
    assert merged.rules.height == 129
    assert merged.launches.height == 12


def test_kernels_aggregate_per_configuration_and_state_counts(base: ncu.NcuReport) -> None:
    kernels = base.kernels
    assert kernels.height == 4
    assert kernels["launches"].to_list() == [3, 3, 3, 3]
    vec_add = kernels.row(0, named=True)
    assert vec_add["kernel_function"] == "vec_add"
    assert vec_add["launch_ids"] == "0,4,8"
    durations = base.launches.filter(pl.col("kernel_function") == "vec_add")["duration_ns"]
    assert vec_add["duration_ns_sum"] == durations.sum()
    assert vec_add["duration_ns_min"] == durations.min()
    assert vec_add["duration_ns_max"] == durations.max()


def test_warp_stalls_per_launch(base: ncu.NcuReport) -> None:
    stalls = base.warp_stalls.filter(pl.col("launch_id") == 2)
    by_reason = {r["reason"]: r for r in stalls.to_dicts()}
    assert by_reason["long_scoreboard"]["stall_cycles_per_issued_inst"] == 11.03
    assert by_reason["long_scoreboard"]["samples"] == 53268.0
    assert by_reason["lg_throttle"]["samples"] == 52007.0
    # The two families spell this reason differently; they are one row.
    assert by_reason["no_instruction"]["samples"] == 68.0
    assert by_reason["warpgroup_arrive"]["stall_cycles_per_issued_inst"] is None
    assert by_reason["gmma"]["samples"] is None


def test_unused_metrics_are_unmodeled_by_name(raw: ncu.NcuReport) -> None:
    names = {u.name: u for u in raw.unmodeled if u.kind == "metric"}
    assert "launch__func_cache_config" in names
    assert names["launch__func_cache_config"].count == 12
    assert "gpu__time_duration.sum" not in names
    assert "FBSP.TriageCompute.dramc__throughput.avg.pct_of_peak_sustained_elapsed" in names
    assert not [u for u in raw.unmodeled if u.kind == "metric_unknown_unit"]


def test_metrics_long_table_keeps_text_and_base_units(base: ncu.NcuReport) -> None:
    metrics = base.metrics
    assert metrics.height == 12 * 2227
    name = metrics.filter((pl.col("launch_id") == 0) & (pl.col("metric") == "device__attribute_display_name"))
    assert name["text"].to_list() == ["NVIDIA H200"]
    duration = metrics.filter((pl.col("launch_id") == 0) & (pl.col("metric") == "gpu__time_duration.sum"))
    assert duration.select("unit", "value", "used_by_facts").row(0) == ("ns", 45472.0, True)


# --- bad input -------------------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_truncated_csv(tmp_path: Path, stem: Path) -> None:
    data = stem.with_suffix(".raw.csv").read_text()
    cut = _write(tmp_path, "cut.csv", data[: len(data) - 5000])
    with pytest.raises(FormatError) as err:
        ncu.open(cut)
    assert err.value.code == "file_truncated"


def test_missing_units_row(tmp_path: Path, stem: Path) -> None:
    lines = stem.with_suffix(".raw.csv").read_text().splitlines(keepends=True)
    no_units = _write(tmp_path, "no_units.csv", lines[0] + "".join(lines[2:]))
    with pytest.raises(InputError) as err:
        ncu.open(no_units)
    assert err.value.code == "ncu_units_row_missing"


def _replace_unit(text: str, metric: str, unit: str) -> str:
    lines = text.splitlines(keepends=True)
    header = lines[0].rstrip("\n").split('","')
    units = lines[1].rstrip("\n").split('","')
    units[header.index(metric)] = unit
    lines[1] = '","'.join(units) + "\n"
    return "".join(lines)


def test_unknown_unit_on_a_used_metric_is_an_error(tmp_path: Path, stem: Path) -> None:
    text = _replace_unit(stem.with_suffix(".raw_base.csv").read_text(), "gpu__time_duration.sum", "fortnight")
    with pytest.raises(InputError) as err:
        ncu.open(_write(tmp_path, "unit.csv", text)).launches  # noqa: B018
    assert err.value.code == "ncu_unit_unknown"
    assert "gpu__time_duration.sum" in err.value.message


def test_known_unit_of_the_wrong_dimension_is_an_error(tmp_path: Path, stem: Path) -> None:
    text = _replace_unit(stem.with_suffix(".raw_base.csv").read_text(), "gpu__time_duration.sum", "byte")
    with pytest.raises(InputError) as err:
        ncu.open(_write(tmp_path, "dim.csv", text)).launches  # noqa: B018
    assert err.value.code == "ncu_unit_unexpected"


def test_unknown_unit_on_an_unused_metric_is_unmodeled(tmp_path: Path, stem: Path) -> None:
    text = _replace_unit(stem.with_suffix(".raw_base.csv").read_text(), "launch__stack_size", "furlong")
    report = ncu.open(_write(tmp_path, "unused.csv", text))
    assert report.launches.height == 12
    odd = [u for u in report.unmodeled if u.kind == "metric_unknown_unit"]
    assert [u.name for u in odd] == ["launch__stack_size [furlong]"]


def _first_duration(stem: Path, value: str) -> str:
    """The raw page with the first launch's ``gpu__time_duration.sum`` cell replaced by ``value``."""
    lines = stem.with_suffix(".raw_base.csv").read_text().splitlines(keepends=True)
    col = lines[0].rstrip("\n").split('","').index("gpu__time_duration.sum")
    cells = lines[2].rstrip("\n").split('","')
    cells[col] = value
    lines[2] = '","'.join(cells) + "\n"
    return "".join(lines)


def test_console_preamble_and_na_cells(tmp_path: Path, stem: Path) -> None:
    preamble = "==PROF== Connected to process 562 (/tmp/w/kernels_bin)\n==WARNING== clocks not locked\n"
    report = ncu.open(_write(tmp_path, "prof.csv", preamble + _first_duration(stem, "n/a")))
    assert report.launches["duration_ns"].to_list()[:2] == [None, 296928.0]


def test_text_in_a_used_metric_is_an_error(tmp_path: Path, stem: Path) -> None:
    with pytest.raises(InputError) as err:
        ncu.open(_write(tmp_path, "text.csv", _first_duration(stem, "about 45 us"))).launches  # noqa: B018
    assert err.value.code == "ncu_value_invalid"
    assert err.value.message.startswith("metric gpu__time_duration.sum holds ")  # the metric, then the shape


def test_a_negative_metric_is_an_error(tmp_path: Path, stem: Path) -> None:
    # Found by a hostile trial: a duration of -5 us gave duration_ns -5000000.0, exit 0.
    file = _write(tmp_path, "negative.csv", _first_duration(stem, "-5"))
    with pytest.raises(InputError) as err:
        ncu.open(file).launches  # noqa: B018
    assert err.value.code == "ncu_value_invalid" and err.value.path == str(file)  # the file is named
    assert "gpu__time_duration.sum is negative" in err.value.message and err.value.observed == "-5"


def test_a_value_that_overflows_in_its_base_unit_is_an_error(tmp_path: Path, stem: Path) -> None:
    # Found by a hostile trial: 1e308 ms became an infinite duration in ns, printed as `inf s` and a
    # null in JSON with exit 0, while 1e309 (infinite as written) was already refused.
    lines = stem.with_suffix(".raw.csv").read_text().splitlines(keepends=True)
    col = lines[0].rstrip("\n").split('","').index("gpu__time_duration.sum")
    assert lines[1].rstrip("\n").split('","')[col] in ("ms", "usecond", "us", "msecond")  # a scaled unit
    for value in ("1e308", "1e309"):
        cells = lines[2].rstrip("\n").split('","')
        cells[col] = value
        text = "".join([*lines[:2], '","'.join(cells) + "\n", *lines[3:]])
        with pytest.raises(InputError) as err:
            ncu.open(_write(tmp_path, f"huge{value}.csv", text)).launches  # noqa: B018
        assert err.value.code == "ncu_value_invalid", value


def test_garbage_and_header_only_and_session_page(tmp_path: Path, stem: Path) -> None:
    with pytest.raises(FormatError) as err:
        ncu.open(_write(tmp_path, "garbage.csv", "hello,world\n1,2\n"))
    assert err.value.code == "format_invalid"
    lines = stem.with_suffix(".raw.csv").read_text().splitlines(keepends=True)
    with pytest.raises(InputError) as err2:
        ncu.open(_write(tmp_path, "empty.csv", lines[0] + lines[1]))
    assert err2.value.code == "ncu_report_empty"
    with pytest.raises(InputError) as err3:
        ncu.open(stem.with_suffix(".session.csv"))
    assert err3.value.code == "ncu_wrong_page"


def test_ncu_error_output_instead_of_a_table(tmp_path: Path) -> None:
    text = "==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n"
    with pytest.raises(InputError) as err:
        ncu.open(_write(tmp_path, "err.csv", text))
    assert err.value.code == "ncu_tool_error"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        ncu.open(tmp_path / "absent.csv")
    assert err.value.code == "file_not_found"


def test_reference_documents_every_fact(raw: ncu.NcuReport) -> None:
    from conftest import ROOT

    doc = (ROOT / "references" / "ncu.md").read_text()
    for source in raw.info.fact_sources:
        assert f"| `{source.fact}` | " in doc, source.fact


def test_every_cell_of_the_raw_page_equals_a_csv_module_reading(stem: Path) -> None:
    """Columns no fact reads are parsed on first use; all 12 x 2,227 cells equal a plain csv reading."""
    import csv

    path = stem.with_suffix(".raw.csv")
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    header, units = rows[0], rows[1]
    metrics = ncu.open(path).metrics
    mine = {
        (lid, m): (v, t)
        for lid, m, v, t in metrics.select("launch_id", "metric", "value", "text").iter_rows()
    }
    numbers = 0
    for row in rows[2:]:
        for name, unit, cell in list(zip(header, units, row, strict=True))[11:]:
            value, text = mine[(int(row[0]), name)]
            plain = cell.replace(",", "")
            if cell in ("", "n/a", "nan", "no data"):
                assert (value, text) == (None, None), name
            elif plain.replace(".", "", 1).isdigit():
                factor = ncu.unit(unit)
                assert factor is not None
                assert value == float(plain) * factor[1], name
                numbers += 1
            else:
                assert (value, text) == (None, cell), name
    assert numbers > 12 * 1900
