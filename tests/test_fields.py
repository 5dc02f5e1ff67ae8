"""Every column of every table a reading command prints, and every field of the reading commands' JSON
documents, has a one-line definition (``gpuopt.fields``, the models' descriptions), shown by
``gpuopt schema`` and in ``references/fields.md``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from conftest import ROOT, gpuopt
from gpuopt import fields
from gpuopt.agent_tools import walk
from gpuopt.cli import cli

NSYS = "h200/nsys/eager.sqlite"
TORCH = "h200/torch/eager_trace.json"
NCU = "h200/ncu/kernels_full.ncu-rep"
SASS = "h200/sass/kernels_sm90.cuobjdump.sass"
NVDISASM = "h200/sass/kernels_sm90.nvdisasm.sass"
GPU_TRACE = "h200/nsys/stats_cuda_gpu_trace.csv"
NCCL = "public/nsys/mfu_2gpu_before.sqlite"
RANK0 = "public/torch/hta_timeline_analysis_sampled_rank-0.json.gz"
RANK1 = "public/torch/hta_trace_filter_sampled_rank-1.json.gz"
NSYS_REPORTS = ["cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"]
NSYS_REPORTS += ["nvtx_sum", "cuda_kern_exec_sum", "nvtx_kern_sum"]
NCU_TABLES = ["kernels", "warp_stalls", "instruction_mix", "rules", "sections", "metrics"]

# Every table command on a real fixture ({nsys}, ... below), {aa} a small A/A sample file.
RUNS: list[list[str]] = [
    *(["nsys", c, "{nsys}"] for c in ["kernels", "api", "mem", "nvtx", "gaps", "comm"]),
    ["nsys", "nvtx", "{nsys}", "--per-instance"],
    *(["nsys", "stats", "{nsys}", "--report", r] for r in NSYS_REPORTS),
    *(["torch", c, "{torch}"] for c in ["collectives", "comm", "gaps", "graphs", "kernels"]),
    *(["torch", c, "{torch}"] for c in ["launches", "ops", "steps", "timeline", "transfers"]),
    ["torch", "api", "{torch}"],
    *(["ncu", c, "{ncu}"] for c in ["launches", "summary", "roofline"]),
    ["ncu", "compare", "{ncu}", "{ncu}"],
    *(["ncu", "table", "{ncu}", t] for t in NCU_TABLES),
    *(["sass", c, "{sass}"] for c in ["functions", "opcodes", "signatures"]),
    ["sass", "functions", "{nvdisasm}"],
    ["stats", "compare", "{gpu_trace}", "{gpu_trace}", "--column", "Duration (ns)"],
    ["stats", "compare", "{aa}", "{aa}", "--unpaired", "--column", "a"],
    ["stats", "noise", "{aa}", "--first-column", "a", "--second-column", "b"],
    ["profile", "diff", "--baseline", "{torch}", "--candidate", "{torch2}"],
    *(["nsys", c, "{nsys}", "--per-device"] for c in ["kernels", "api", "nvtx"]),
    ["nsys", "kernels", "{nsys}", "{nsys_copy}"],  # two files: one file twice is files_duplicate
    ["torch", "kernels", "{torch}", "{torch2}"],
    *(["nsys", "ranks", "{nccl}", "--part", p] for p in ["ranks", "collectives", "stragglers"]),
    *(["torch", "ranks", "{rank0}", "{rank1}", "--part", p] for p in ["ranks", "collectives", "stragglers"]),
    ["torch", "paths", "{torch}"],
    ["torch", "paths", "{torch}", "--kernels"],
    *(["torch", "flops", "{torch2}", "--part", p] for p in ["table", "steps"]),
    ["ncu", "flops", "{ncu}"],
    *(
        [a, c, f"{{{a}}}"]
        for a in ["nsys", "torch"]
        for c in ["iterations", "critical-path", "queue", "sequences"]
    ),
    *([a, "critical-path", f"{{{a}}}", "--part", "edges"] for a in ["nsys", "torch"]),
    *([a, "queue", f"{{{a}}}", "--series"] for a in ["nsys", "torch"]),
]

# Tables of the evaluation views (ls, show --part) need a store with records: not covered here.
_NOT_READING = {("ls",), ("show",)}


def _table(data: dict[str, object], part: str | None = None) -> dict[str, object]:
    if part is not None:  # one of several tables of the document (ranks)
        found = data[part]
        assert isinstance(found, dict)
        return found
    for part in ("table", "kernels", "pairs"):
        found = data.get(part)
        if isinstance(found, dict) and "columns" in found:
            return found
    raise AssertionError(f"no table in {sorted(data)}")


def _emitted(shared: Path, tmp_path: Path) -> list[tuple[str, list[tuple[str, str]]]]:
    """(table key, [(column, polars dtype)]) of every run of RUNS."""
    aa = tmp_path / "aa.csv"
    aa.write_text("a,b\n1.0,1.1\n2.0,2.1\n3.0,2.9\n4.0,4.2\n")
    files = {
        "nsys": NSYS,
        "torch": TORCH,
        "torch2": "gpuopt/h200/decode/decode_eager_trace.json.gz",
        "ncu": NCU,
        "sass": SASS,
        "nvdisasm": NVDISASM,
        "gpu_trace": GPU_TRACE,
        "nccl": NCCL,
        "rank0": RANK0,
        "rank1": RANK1,
    }
    paths = {"aa": str(aa)} | {k: str(shared / v) for k, v in files.items()}
    shutil.copy(shared / NSYS, tmp_path / "copy.sqlite")
    paths["nsys_copy"] = str(tmp_path / "copy.sqlite")
    runner = CliRunner()
    found = []
    for args in RUNS:
        argv = [a.format(**paths) for a in args]
        part = argv[argv.index("--part") + 1] if "--part" in argv else None
        argv = argv[: argv.index("--part")] if part else argv
        result = runner.invoke(cli, [*argv, "--json", "--limit", "1"])
        assert result.exit_code == 0, (argv, result.output[-2000:])
        table = _table(json.loads(result.output)["data"], part)
        columns = [(c["name"], c["dtype"]) for c in table["columns"]]  # type: ignore[index]
        found.append((fields.qualified(args[0], str(table["name"])), columns))
    return found


def _same_dtype(declared: str, emitted: str) -> bool:
    """``List(Struct)`` declares a list of records whatever their fields (polars prints them)."""
    return emitted == declared or (declared == "List(Struct)" and emitted.startswith("List(Struct("))


def test_every_emitted_column_has_exactly_one_declaration_of_its_dtype(shared: Path, tmp_path: Path) -> None:
    """The recipe of references/architecture.md ("Where to add a new nsys fact") stays true: a column a
    command prints is declared once, with the dtype it has, and no declaration outlives its column."""
    emitted = _emitted(shared, tmp_path)
    common = {c.name: c for c in fields.COMMON_COLUMNS}
    wrong = {}
    for key, columns in emitted:
        own = [c.name for c in fields.COLUMNS.get(key, ())]
        assert len(own) == len(set(own)), f"{key} declares a column twice"
        declared = {c.name: c for c in fields.COLUMNS.get(key, ())}
        for name, dtype in columns:
            found = declared.get(name) or common.get(name)  # a table's own declaration first
            if found is None or not _same_dtype(found.dtype, dtype):
                wrong[f"{key}.{name}"] = (dtype, found)
    assert wrong == {}
    # No definition outlives its column: every defined table is emitted, with every defined column.
    seen: dict[str, set[str]] = {}
    for key, columns in emitted:
        seen.setdefault(key, set()).update(name for name, _ in columns)
    assert set(fields.TABLES) - fields.LIBRARY_TABLES == set(seen)
    assert set(fields.COMMON) <= {name for _, columns in emitted for name, _ in columns}
    assert {k: set(v) - seen[k] for k, v in fields.TABLES.items() if k in seen and set(v) - seen[k]} == {}


def test_library_tables_are_built_as_declared(shared: Path) -> None:
    from gpuopt import nsys

    frame = nsys.open(shared / NSYS).operations()
    declared = [(c.name, c.dtype) for c in fields.COLUMNS["nsys.operations"]]
    assert [(n, str(t)) for n, t in frame.schema.items()] == declared


def test_a_column_name_has_one_unit_wherever_it_is_declared() -> None:
    """People's tables scale a column by its name's declared unit (``cli/_people.py``): a name declared
    with two units would be shown by neither; only names whose units are not scaled may differ."""
    from gpuopt.cli._people import _SCALES

    units: dict[str, set[str]] = {}
    for c in (*(c for cs in fields.COLUMNS.values() for c in cs), *fields.COMMON_COLUMNS):
        units.setdefault(c.name, set()).add(c.unit)
    several = {name: u for name, u in units.items() if len(u) > 1}
    assert {name: u for name, u in several.items() if u & set(_SCALES)} == {}
    assert fields.units()["total_time_ns"] == "ns" and "value" not in fields.units()


def test_every_table_command_is_run_here() -> None:
    ran = {tuple(a for a in args[:2] if not a.startswith("{")) for args in RUNS}
    for path, cmd in walk(cli):
        if isinstance(cmd, click.Group) or not {"limit", "out"} <= {p.name for p in cmd.params}:
            continue
        if path in _NOT_READING:
            continue
        assert path in ran, f"gpuopt {' '.join(path)} prints a table this test does not run"


def test_every_reading_document_field_has_a_definition() -> None:
    missing = []
    for name, model in fields.reading_documents().items():
        missing += [f"{name}: {path}" for path, text in fields.model_fields(model) if not text]
    assert missing == []


def test_the_confusing_ones_say_what_they_count() -> None:
    ops = fields.TABLES["torch.ops"]
    assert "nested ops' work excluded" in ops["gpu_time_ns"]
    assert "including nested" in ops["gpu_time_total_ns"]
    assert "idle time between" in fields.TABLES["nsys.nvtx_instances"]["gpu_projected_ns"]
    timeline = dict(fields.model_fields(fields.reading_documents()["gpuopt.nsys.timeline/v1"]))
    assert "exactly k kernels" in (timeline["timeline.devices[].concurrency.time_at_level_ns"] or "")


def test_schema_prints_a_table_definitions() -> None:
    run = gpuopt("schema", "torch.ops")
    assert run.code == 0, run.stderr
    assert "gpu_time_total_ns" in run.stdout and "including nested" in run.stdout
    shown = gpuopt("schema", "torch.ops", "--json").json()["data"]["shown"]["json_schema"]
    assert shown["properties"]["gpu_time_ns"]["description"] == fields.TABLES["torch.ops"]["gpu_time_ns"]
    assert "torch.ops" in gpuopt("schema", "--json").json()["data"]["tables"]


def test_schema_takes_the_name_a_table_carries_in_its_json() -> None:
    assert fields.resolve("ncu_launches") == ["ncu.launches"]
    assert fields.resolve("ncu.ncu_launches") == ["ncu.launches"]
    assert fields.resolve("cuda_gpu_kern_sum") == ["nsys.cuda_gpu_kern_sum"]
    assert fields.resolve("gaps") == ["nsys.gaps", "torch.gaps"]
    shown = gpuopt("schema", "ncu_launches", "--json").json()["data"]["shown"]
    assert shown["name"] == "ncu.launches" and "dram_bytes" in shown["json_schema"]["properties"]
    run = gpuopt("schema", "gaps", "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "schema_ambiguous"


@pytest.mark.parametrize("name", ["nope.table", "torch.nope"])
def test_schema_unknown_table_exits_2(name: str) -> None:
    run = gpuopt("schema", name, "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "schema_unknown"


def test_reference_is_current() -> None:
    assert (ROOT / "references" / "fields.md").read_text() == fields.markdown() + "\n"


def test_schema_takes_the_command_name_of_every_table(shared: Path) -> None:
    """`gpuopt schema torch.timeline` means the table `gpuopt torch timeline` prints (torch.streams)."""
    files = {"nsys": shared / NSYS, "torch": shared / TORCH, "ncu": shared / NCU}
    plain = [a for a in RUNS if len(a) == 3 and a[0] in files]
    runner = CliRunner()
    wrong = {}
    for area, command, _ in plain:
        result = runner.invoke(cli, [area, command, str(files[area]), "--json", "--limit", "1"])
        assert result.exit_code == 0, (area, command, result.output[-2000:])
        key = fields.qualified(area, str(_table(json.loads(result.output)["data"])["name"]))
        if fields.resolve(f"{area}.{command}") != [key]:
            wrong[f"{area}.{command}"] = (fields.resolve(f"{area}.{command}"), key)
    assert wrong == {}
    assert len(plain) >= 20
