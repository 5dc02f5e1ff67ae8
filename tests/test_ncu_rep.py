""".ncu-rep files through NVIDIA's ncu_report, checked against ncu's own CSV exports of the same report."""

from __future__ import annotations

import csv
import re
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from gpuopt import _native, ncu
from gpuopt.errors import FormatError, InputError, UnsupportedVersionError

ncu_report = pytest.importorskip("ncu_report", reason="the [ncu] extra (ncu-report) is part of [test]")

CUTLASS = (
    "cutlass_384",
    "cutlass_report-s4",
    "cutlass_report-s8-persist",
    "cutlass_report-s8",
    "cutlass_report",
    "cutlass_report75",
)


@pytest.fixture(scope="module")
def stem(shared: Path) -> Path:
    return shared / "h200" / "ncu" / "kernels_full"


@pytest.fixture(scope="module")
def rep(stem: Path) -> ncu.NcuReport:
    return ncu.open(stem.with_suffix(".ncu-rep"))


@pytest.fixture(scope="module")
def a100(shared: Path) -> ncu.NcuReport:
    return ncu.open(shared / "public" / "ncu" / "cutlass_report.ncu-rep")


def launch(report: ncu.NcuReport, launch_id: int) -> dict[str, object]:
    return report.launches.filter(pl.col("launch_id") == launch_id).row(0, named=True)


# --- what the printed CSV text allows -------------------------------------------------------------------


def half_ulp(text: str, unit: str) -> float:
    """Half a unit in the last printed digit, in base units: the most a printed value may differ."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    factor = ncu.unit(unit)
    assert factor is not None, unit
    return 0.5 * 10.0**-decimals * factor[1]


def raw_cells(path: Path) -> dict[int, dict[str, tuple[str, str]]]:
    """launch ID -> metric -> (unit, printed text), from ncu's raw page via the csv module."""
    with path.open() as f:
        rows = list(csv.reader(f))
    header, units = rows[0], rows[1]
    return {int(r[0]): {h: (u, v) for h, u, v in zip(header, units, r, strict=True)} for r in rows[2:]}


def details_cells(path: Path) -> dict[int, dict[tuple[str, str], tuple[str, str]]]:
    out: dict[int, dict[tuple[str, str], tuple[str, str]]] = {}
    with path.open() as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        if r["Metric Name"]:
            out.setdefault(int(r["ID"]), {})[(r["Section Name"], r["Metric Name"])] = (
                r["Metric Unit"],
                r["Metric Value"],
            )
    return out


def terms(source: str) -> tuple[float, list[str]]:
    """`32 * (a + b)` -> (32, [a, b]) from a fact source expression."""
    match = re.fullmatch(r"([0-9.]+) \* \((.*)\)", source)
    scale, body = (float(match.group(1)), match.group(2)) if match else (1.0, source)
    return scale, body.split(" + ")


# --- facts agree across the three sources ----------------------------------------------------------------


@pytest.mark.parametrize("page", ["raw", "raw_base", "details"])
def test_same_launch_same_facts_from_csv_and_rep(stem: Path, rep: ncu.NcuReport, page: str) -> None:
    """Every fact a CSV page carries equals the .ncu-rep value within the page's printed precision."""
    path = stem.with_suffix(f".{page}.csv")
    report = ncu.open(path, session=stem.with_suffix(".session.csv"))
    sources = {s.fact: s.source for s in report.info.fact_sources}
    if page == "details":
        cells = details_cells(path)
        where = {
            m: (s, lbl)
            for m, s, lbl in report.metrics.select("metric", "section", "label").unique().iter_rows()
            if lbl is not None
        }
    else:
        raw = raw_cells(path)
    compared = 0
    for mine, theirs in zip(
        report.launches.iter_rows(named=True), rep.launches.iter_rows(named=True), strict=True
    ):
        assert mine["launch_id"] == theirs["launch_id"]
        assert mine["kernel_demangled"] == theirs["kernel_demangled"]
        assert mine["kernel_function"] == theirs["kernel_function"]
        assert (mine["grid_x"], mine["grid_y"], mine["block_x"], mine["block_y"]) == (
            theirs["grid_x"],
            theirs["grid_y"],
            theirs["block_x"],
            theirs["block_y"],
        )
        assert mine["device_name"] == theirs["device_name"] == "NVIDIA H200"
        for fact, source in sources.items():
            if source is None:
                assert page == "details", fact
                continue
            scale, names = terms(source)
            if page == "details":
                printed = [cells[mine["launch_id"]][where[n]] for n in names]
            else:
                printed = [raw[mine["launch_id"]][n] for n in names]
            tolerance = scale * sum(half_ulp(text, unit) for unit, text in printed)
            assert mine[fact] is not None and theirs[fact] is not None, fact
            assert abs(mine[fact] - theirs[fact]) <= tolerance * 1.000001 + 1e-9 * abs(theirs[fact]), (
                page,
                mine["launch_id"],
                fact,
                mine[fact],
                theirs[fact],
            )
            compared += 1
    assert compared >= (12 * 24 if page == "details" else 12 * 39)


def test_every_metric_of_the_rep_matches_ncus_own_csv(stem: Path, rep: ncu.NcuReport) -> None:
    """NVIDIA's CSV export of the same report is the oracle for all 2,227 metrics of all 12 launches."""
    raw = raw_cells(stem.with_suffix(".raw_base.csv"))
    identity = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream"}
    identity |= {"Block Size", "Grid Size", "Device", "CC"}
    mine = {
        (lid, m): (unit, value, text)
        for lid, m, unit, value, text in rep.metrics.select(
            "launch_id", "metric", "unit", "value", "text"
        ).iter_rows()
    }
    checked = Counter[str]()
    for lid, cells in raw.items():
        for metric, (unit, printed) in cells.items():
            if metric in identity:
                continue
            got = mine.get((lid, metric))
            if printed in ("", "nan", "no data"):
                assert got is None or (got[1] is None and got[2] is None), (lid, metric)
                checked["missing"] += 1
                continue
            assert got is not None, (lid, metric)
            base = ncu.unit(unit)
            assert base is not None
            number = printed.replace(",", "")
            if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", number):
                assert got[1] is not None, (lid, metric)
                tolerance = half_ulp(printed, unit)
                assert abs(got[1] - float(number) * base[1]) <= tolerance * 1.000001 + 1e-9 * abs(got[1]), (
                    lid,
                    metric,
                    got,
                    printed,
                )
                checked["number"] += 1
            else:
                assert got[2] == printed, (lid, metric)
                checked["text"] += 1
    assert checked["number"] > 12 * 2000
    assert checked["text"] == 12 * 5


# --- exact facts -------------------------------------------------------------------------------------


def test_rep_identity_and_tool(rep: ncu.NcuReport) -> None:
    info = rep.info
    assert info.source_format == "ncu-rep"
    assert info.reader.startswith("ncu_report ")
    assert info.tool.version == "2025.3.1.0"
    assert info.tool.version_source == "ncu-rep"
    assert info.tool.command_line is not None
    assert info.tool.command_line.endswith(
        "--clock-control none --set full --import-source yes -o ncu/kernels_full ./kernels_bin"
    )
    assert (info.launches, info.kernels, info.metrics) == (12, 4, 2243)
    assert info.clock_control is not None and info.cache_control is not None
    assert (info.clock_control.value, info.clock_control.source) == ("none", "command line")
    assert (info.cache_control.value, info.cache_control.source) == ("all", "ncu default")
    assert info.devices == ["NVIDIA H200"]
    assert info.archs == ["sm_90"]
    assert info.alias_table_verified is True
    first = launch(rep, 0)
    assert first["kernel_name"] == "vec_add"
    assert first["kernel_mangled"] == "_Z7vec_addPK6float4S1_PS_i"
    assert first["tool_version"] == "2025.3.1.0"


def test_rep_local_spill_and_tensor_facts(rep: ncu.NcuReport) -> None:
    spill = launch(rep, 2)
    assert spill["local_store_inst"] == 8388608.0
    assert spill["local_load_inst"] == 1048576.0
    assert spill["local_store_bytes"] == 4295250816.0
    assert spill["registers_per_thread"] == 32.0
    wmma = launch(rep, 3)
    assert wmma["tensor_pipe_active_pct"] == pytest.approx(4.65119122745562, rel=1e-12)
    assert launch(rep, 0)["tensor_pipe_active_pct"] == 0.0
    assert launch(rep, 0)["duration_ns"] == 45472.0
    assert launch(rep, 0)["dram_bytes"] == 182776832.0


def test_instruction_mix_matches_the_instruction_counters(rep: ncu.NcuReport) -> None:
    mix = rep.instruction_mix
    totals = mix.group_by("launch_id").agg(pl.col("executed_inst").sum()).sort("launch_id")
    assert totals["executed_inst"].to_list() == rep.launches["instructions_executed"].to_list()
    wmma = dict(mix.filter(pl.col("launch_id") == 3).select("opcode", "executed_inst").iter_rows())
    assert wmma["HMMA"] == 4194304.0
    spill = dict(mix.filter(pl.col("launch_id") == 2).select("opcode", "executed_inst").iter_rows())
    assert spill["LDL"] == launch(rep, 2)["local_load_inst"] == 1048576.0
    assert spill["STL"] == launch(rep, 2)["local_store_inst"] == 8388608.0
    assert "HMMA" not in spill


def test_rules_match_the_details_page(stem: Path, rep: ncu.NcuReport) -> None:
    details = ncu.open(stem.with_suffix(".details.csv"))

    def by_rule(frame: pl.DataFrame) -> dict[tuple[object, ...], list[float | None]]:
        out: dict[tuple[object, ...], list[float | None]] = {}
        rows = frame.select(
            "launch_id", "section", "rule", "rule_type", "speedup_type", "estimated_speedup_pct"
        )
        for lid, sec, rule, kind, st, speedup in rows.iter_rows():
            out.setdefault((lid, sec, rule, kind, st), []).append(speedup)
        return {k: sorted(v, key=lambda x: -1.0 if x is None else x) for k, v in out.items()}

    assert rep.rules.height == details.rules.height == 129
    mine, printed = by_rule(rep.rules), by_rule(details.rules)
    assert mine.keys() == printed.keys()
    for key, speedups in mine.items():
        for exact, shown in zip(speedups, printed[key], strict=True):
            if shown is None:
                assert exact is None, key
            else:
                assert exact == pytest.approx(shown, rel=6e-4), key  # the page prints 4 significant digits
    assert {u.name: u.count for u in rep.unmodeled if u.kind == "rule_result"} == {
        "rule result without a message": 9
    }


def test_sections_as_reported(rep: ncu.NcuReport) -> None:
    sections = rep.sections.filter(pl.col("launch_id") == 0)
    assert sections.height == 21
    ids = dict(sections.select("section_id", "section").iter_rows())
    assert ids["SpeedOfLight"] == "GPU Speed Of Light Throughput"
    assert ids["LaunchStats"] == "Launch Statistics"


def test_roofline_from_sass_counters(rep: ncu.NcuReport) -> None:
    roof = rep.roofline()
    vec_add = roof.filter((pl.col("launch_id") == 0) & (pl.col("precision") == "fp32")).row(0, named=True)
    assert vec_add["flop"] == pytest.approx(16777216.0, rel=1e-9)  # one FADD per element of 2^24
    assert vec_add["achieved_flop_per_s"] == pytest.approx(vec_add["flop"] / 45472e-9, rel=0.05)
    assert vec_add["peak_flop_source"] == "report"
    assert vec_add["peak_flop_per_s"] == pytest.approx(2 * 16896 * 1931913145.35, rel=1e-9)
    assert vec_add["peak_dram_bytes_per_s"] == pytest.approx(1504 * 3197748064.74, rel=1e-9)
    assert vec_add["arithmetic_intensity_flop_per_byte"] == pytest.approx(
        vec_add["achieved_flop_per_s"] / vec_add["dram_bytes_per_s"]
    )
    assert vec_add["region"] == "bandwidth"
    tensor = roof.filter(pl.col("launch_id") == 3).filter(pl.col("precision").str.starts_with("tensor_"))
    # ncu reports the op path and the fp16-source aggregate of the same HMMAs: two rows, one count.
    assert sorted(tensor["precision"].to_list()) == [
        "tensor_op_hmma_src_fp16_dst_fp32_sparsity_off",
        "tensor_src_fp16",
    ]
    assert tensor["flop"].to_list() == [2.0 * 2048**3] * 2
    measured = rep.roofline({"fp32": 5.0e13}, 4.0e12)
    row = measured.filter((pl.col("launch_id") == 0) & (pl.col("precision") == "fp32")).row(0, named=True)
    assert (row["peak_flop_per_s"], row["peak_flop_source"]) == (5.0e13, "user")
    assert (row["peak_dram_bytes_per_s"], row["peak_dram_source"]) == (4.0e12, "user")
    assert row["ridge_flop_per_byte"] == 12.5
    with pytest.raises(InputError) as err:
        rep.roofline({"fp32": -1.0})
    assert err.value.code == "ncu_peak_invalid"


# --- the older generation: ncu 2024.1.1 on A100 ------------------------------------------------------


def test_a100_facts_from_the_older_generation(a100: ncu.NcuReport) -> None:
    info = a100.info
    assert (info.tool.version, info.archs, info.devices) == (
        "2024.1.1.0",
        ["sm_80"],
        ["NVIDIA A100 80GB PCIe"],
    )
    assert info.alias_table_verified is True
    assert info.clock_control is not None
    assert (info.clock_control.value, info.clock_control.source) == ("base", "command line")
    first = launch(a100, 0)
    assert first["duration_ns"] == 11168.0
    assert first["registers_per_thread"] == 188.0
    assert (first["grid_size"], first["block_size"]) == (96.0, 128.0)
    assert first["sm_throughput_pct"] == pytest.approx(17.838340043357075, rel=1e-12)
    assert first["achieved_occupancy_pct"] == pytest.approx(5.997717739570417, rel=1e-12)
    assert first["theoretical_occupancy_pct"] == 12.5
    assert first["dram_bytes"] == 1345664.0
    assert first["tensor_pipe_active_pct"] == pytest.approx(26.915462055823202, rel=1e-12)
    assert first["kernel_function"] == "Kernel"
    fp16 = next(c for c in info.roofline if c.precision == "fp16")
    assert fp16.available is False
    assert "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum.per_cycle_elapsed" in fp16.missing_metrics


def test_alias_table_resolves_identically_on_both_generations(
    rep: ncu.NcuReport, a100: ncu.NcuReport
) -> None:
    h200 = {s.fact: s.source for s in rep.info.fact_sources}
    older = {s.fact: s.source for s in a100.info.fact_sources}
    assert None not in h200.values()
    assert None not in older.values()
    assert h200 == older
    assert h200["dram_bytes"] == "dram__bytes_read.sum + dram__bytes_write.sum"
    assert h200["dram_throughput_pct"] == "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
    assert h200["l2_bytes"] == "32 * (lts__t_sectors.sum)"
    assert h200["local_store_inst"] == "smsp__sass_inst_executed_op_local_st.sum"


@pytest.mark.parametrize("name", CUTLASS)
def test_every_public_a100_report_reads(shared: Path, name: str) -> None:
    report = ncu.open(shared / "public" / "ncu" / f"{name}.ncu-rep")
    framing = _native.ncu_rep_framing_json(str(shared / "public" / "ncu" / f"{name}.ncu-rep"))
    assert report.launches.height == int(re.search(rb'"results":(\d+)', framing).group(1))  # type: ignore[union-attr]
    assert report.launches["duration_ns"].null_count() == 0
    assert report.kernels["launches"].sum() == report.launches.height


def test_compare_two_generations_states_counts(rep: ncu.NcuReport) -> None:
    same = ncu.compare(rep, rep)
    durations = same.filter(pl.col("metric") == "duration_ns")
    assert durations.height == 4
    assert durations["delta"].to_list() == [0.0] * 4
    assert durations["a_launches"].to_list() == [3] * 4
    assert durations["a_values"].to_list() == [3] * 4


# --- bad .ncu-rep input ------------------------------------------------------------------------------


def test_ncu_report_trap_is_an_error_here(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.ncu-rep"
    garbage.write_bytes(b"\x13\x37" * 64)
    assert ncu_report.load_report(str(garbage)).num_ranges() == 0  # the trap: no error from NVIDIA's reader
    with pytest.raises(FormatError) as err:
        ncu.open(garbage)
    assert err.value.code == "format_invalid"


def test_empty_file_and_report_without_results(tmp_path: Path, stem: Path) -> None:
    empty = tmp_path / "empty.ncu-rep"
    empty.write_bytes(b"")
    with pytest.raises(InputError) as err:
        ncu.open(empty)
    assert err.value.code == "ncu_report_empty"
    # The real file cut after its session blocks (before the first result): valid framing, 0 launches.
    data = (stem.with_suffix(".ncu-rep")).read_bytes()
    cut = tmp_path / "sessions_only.ncu-rep"
    cut.write_bytes(data[: _first_result_block(data)])
    with pytest.raises(InputError) as err2:
        ncu.open(cut)
    assert err2.value.code == "ncu_report_empty"


def _first_result_block(data: bytes) -> int:
    """Offset of the first block whose header declares results (NumResults, field 2)."""
    pos = 4
    (size,) = struct.unpack_from("<I", data, pos)
    pos += 4 + size
    while True:
        (size,) = struct.unpack_from("<I", data, pos)
        header = data[pos + 4 : pos + 4 + size]
        fields = _varints(header)
        if fields.get(2, 0) > 0:
            return pos
        pos += 4 + size + fields.get(5, 0)


def _varints(message: bytes) -> dict[int, int]:
    out, i = {}, 0
    while i < len(message):
        key, i = _varint(message, i)
        if key & 7 == 0:
            out[key >> 3], i = _varint(message, i)
        else:
            length, i = _varint(message, i)
            i += length
    return out


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def test_truncated_and_future_reports(tmp_path: Path, stem: Path) -> None:
    data = stem.with_suffix(".ncu-rep").read_bytes()
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(data[: len(data) // 3])
    with pytest.raises(FormatError) as err:
        ncu.open(cut)
    assert err.value.code == "file_truncated"
    future = tmp_path / "future.ncu-rep"
    future.write_bytes(b"NVR\0" + struct.pack("<I", 2) + b"\x08\x09" + data[14:])
    with pytest.raises(UnsupportedVersionError):
        ncu.open(future)


def test_without_ncu_report_or_ncu_exit_3(tmp_path: Path, stem: Path) -> None:
    """With NVIDIA's module unimportable and no ncu on PATH, reading a report says what to install."""
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "ncu_report.py").write_text("raise ImportError('hidden for this test')\n")
    env = {"PYTHONPATH": str(blocker), "PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "gpuopt", "ncu", "summary", str(stem.with_suffix(".ncu-rep")), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    assert '"code": "tool_absent"' in done.stdout
    assert "gpuopt[ncu]" in done.stdout


FAKE_IMPORT_NCU = """#!{python}
# A stand-in for `ncu --import R --csv --page P`: prints ncu's own export of that page of the fixture.
import sys
args = sys.argv[1:]
if args == ["--version"]:
    sys.stdout.write(open({banner!r}).read())
    sys.exit(0)
page = args[args.index("--page") + 1]
assert args[:4] == ["--import", {report!r}, "--csv", "--page"], args
if page == "raw":
    assert args[5:] == ["--print-units", "base"], args
sys.stdout.write(open({stem!r} + {{"raw": ".raw_base.csv"}}.get(page, "." + page + ".csv")).read())
"""


def test_without_ncu_report_the_ncu_import_path_reads_the_report(tmp_path: Path, stem: Path) -> None:
    """The fallback: ncu on PATH exports the raw (base units), details and session pages; same facts."""
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "ncu_report.py").write_text("raise ImportError('hidden for this test')\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "ncu"
    fake.write_text(
        FAKE_IMPORT_NCU.format(
            python=sys.executable,
            banner=str(stem.parent / "ncu_version.txt"),
            report=str(stem.with_suffix(".ncu-rep")),
            stem=str(stem),
        )
    )
    fake.chmod(0o755)
    env = {
        "PYTHONPATH": str(blocker),
        "PATH": f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-m", "gpuopt", "ncu", "summary", str(stem.with_suffix(".ncu-rep")), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    import json

    report = json.loads(done.stdout)["data"]["report"]
    assert report["reader"] == "ncu --import 2025.3.1.0"
    assert report["tool"]["version"] == "2025.3.1.0"
    assert report["launches"] == 12
    assert report["rules"] == 129


def test_an_unchanged_report_is_read_once_per_process(
    stem: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second open of the same unchanged file reuses the first read (the MCP server asks many questions
    of one report); a file whose mtime changed, or another copy, is read again."""
    import os
    import shutil

    from gpuopt._ncu import rep as ncu_rep

    copy = tmp_path / "k.ncu-rep"
    shutil.copy(stem.with_suffix(".ncu-rep"), copy)
    reads: list[Path] = []
    real = ncu_rep.read_with_ncu_report
    monkeypatch.setattr(ncu_rep, "read_with_ncu_report", lambda p: reads.append(p) or real(p))
    first, again = ncu.open(copy), ncu.open(copy)
    assert reads == [copy]
    assert first._native is again._native
    assert first.kernels.equals(ncu.open(stem.with_suffix(".ncu-rep")).kernels)  # the original: a read
    reads.clear()
    st = copy.stat()
    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000))
    assert ncu.open(copy).kernels.equals(first.kernels)
    assert reads == [copy]
    other = tmp_path / "other.ncu-rep"
    shutil.copy(copy, other)
    ncu.open(other)
    assert reads == [copy, other]
