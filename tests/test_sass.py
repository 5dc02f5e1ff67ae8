"""SASS listings: exact facts on the real fixtures, the two dialects agreeing, and every bad-input class."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from conftest import gpuopt
from gpuopt import sass
from gpuopt.errors import FormatError, InputError

SASS_DIR = "h200/sass"
KERNELS = ["_Z9wmma_gemmPK6__halfS1_Pfiii", "_Z11local_spillPKfPfi", "_Z12strided_copyPKfPfii",
           "_Z7vec_addPK6float4S1_PS_i"]  # fmt: skip

_INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)")


def oracle_histogram(text: str, function_marker: str) -> dict[str, Counter[str]]:
    """An independent per-function opcode count with a plain regex (padding NOPs dropped at the end)."""
    out: dict[str, Counter[str]] = {}
    current: list[str] | None = None
    name = None
    for line in text.splitlines():
        if function_marker in line:
            if name is not None and current is not None:
                out[name] = _drop_padding(current)
            name = line.split(function_marker, 1)[1].split(",")[0].strip().rstrip(":")
            current = []
            continue
        m = _INSTR.match(line)
        if m and current is not None:
            current.append(m.group(2) if not re.match(r"^\s*/\*\w+\*/\s+@", line) else "@" + m.group(2))
    if name is not None and current is not None:
        out[name] = _drop_padding(current)
    return out


def _drop_padding(ops: list[str]) -> Counter[str]:
    while ops and ops[-1] == "NOP":
        ops.pop()
    return Counter(op.lstrip("@") for op in ops)


@pytest.fixture(scope="module")
def cuobj(shared: Path) -> sass.SassScan:
    return sass.scan(shared / SASS_DIR / "kernels_sm90.cuobjdump.sass")


@pytest.fixture(scope="module")
def nvdis(shared: Path) -> sass.SassScan:
    return sass.scan(shared / SASS_DIR / "kernels_sm90.nvdisasm.sass")


def counts(scan: sass.SassScan, function: str) -> dict[str, int]:
    rows = scan.opcodes.filter(pl.col("function") == function)
    return dict(zip(rows["opcode"].to_list(), rows["count"].to_list(), strict=True))


def test_cuobjdump_fixture_functions_and_counts(cuobj: sass.SassScan) -> None:
    s = cuobj.summary
    assert (s.dialect, s.architectures, s.cubin_count, s.function_count) == ("cuobjdump", ["sm_90"], 1, 4)
    f = cuobj.functions
    assert f["function"].to_list() == KERNELS
    assert f["arch"].to_list() == ["sm_90"] * 4
    assert f["instruction_count"].to_list() == [236, 985, 130, 24]
    assert f["padding_nop_count"].to_list() == [12, 15, 14, 8]
    assert f["predicated_count"].to_list() == [6, 193, 5, 1]
    assert f["backward_branch_count"].to_list() == [2, 0, 0, 0]
    assert f["registers"].to_list() == [None] * 4  # cuobjdump -sass does not state them
    assert s.instruction_count == 1375 and s.padding_nop_count == 49


def test_fixture_facts_named_in_the_issue(cuobj: sass.SassScan) -> None:
    wmma, spill, _, vec = KERNELS
    assert counts(cuobj, wmma)["HMMA.16816.F32"] == 10
    assert (counts(cuobj, spill)["LDL"], counts(cuobj, spill)["STL.128"]) == (2, 16)
    assert counts(cuobj, vec)["LDG.E.128.CONSTANT"] == 2
    assert counts(cuobj, vec)["STG.E.128"] == 1
    row = cuobj.opcodes.filter((pl.col("function") == vec) & (pl.col("base") == "LDG")).row(0, named=True)
    assert (row["class"], row["width_bits"]) == ("global_load", 128)
    classes = cuobj.functions.filter(pl.col("function") == spill).row(0, named=True)
    assert (classes["local_load_count"], classes["local_store_count"]) == (2, 16)


def test_histogram_matches_an_independent_regex_count(shared: Path, cuobj: sass.SassScan) -> None:
    text = (shared / SASS_DIR / "kernels_sm90.cuobjdump.sass").read_text()
    expected = oracle_histogram(text, "Function : ")
    assert set(expected) == set(KERNELS)
    for name, hist in expected.items():
        assert counts(cuobj, name) == dict(hist), name


def test_nvdisasm_listing_of_the_same_cubin_gives_the_same_counts(
    cuobj: sass.SassScan, nvdis: sass.SassScan
) -> None:
    key = ["function", "opcode"]
    assert nvdis.summary.dialect == "nvdisasm"
    assert (
        nvdis.opcodes.drop("function_index").sort(key).equals(cuobj.opcodes.drop("function_index").sort(key))
    )
    same = ["function", "instruction_count", "padding_nop_count", "predicated_count", "backward_branch_count"]
    assert nvdis.functions.select(same).sort("function").equals(cuobj.functions.select(same).sort("function"))


def test_nvdisasm_states_registers_and_stack_like_res_usage(shared: Path, nvdis: sass.SassScan) -> None:
    # Oracle: NVIDIA's cuobjdump -res-usage of the same cubin (REG, STACK per function).
    oracle = {}
    text = (shared / SASS_DIR / "kernels_sm90.res-usage.txt").read_text()
    for name, reg, stack in re.findall(r"Function (\S+):\n\s+REG:(\d+) STACK:(\d+)", text):
        oracle[name] = (int(reg), int(stack))
    got = {r["function"]: (r["registers"], r["frame_size_bytes"]) for r in nvdis.functions.to_dicts()}
    assert got == oracle
    assert oracle["_Z11local_spillPKfPfi"] == (32, 256)


@pytest.mark.parametrize(
    ("name", "function", "instructions", "registers"),
    [
        ("librecuda_async_kernels.asm", "write_float", 437, 22),
        ("librecuda_dynamic_shared_mem.asm", "write_float_sum", 12, 10),
        ("librecuda_kernel_struct_param.asm", "read_from_struct", 8, 8),
    ],
)
def test_public_nvdisasm_sm80_listings(
    shared: Path, name: str, function: str, instructions: int, registers: int
) -> None:
    path = shared / "public/sass" / name
    scan = sass.scan(path)
    assert scan.summary.architectures == ["sm_80"]  # from .headerflags EF_CUDA_SM80 (no .target line)
    row = scan.functions.row(0, named=True)
    assert (scan.summary.function_count, row["function"]) == (1, function)
    assert (row["instruction_count"], row["registers"]) == (instructions, registers)
    expected = oracle_histogram(path.read_text().replace(f"{function}:\n", f"@@FN {function}\n"), "@@FN ")
    assert counts(scan, function) == dict(expected[function])


def test_probe_fatbin_with_ptx_and_bare_cubin(shared: Path) -> None:
    fat = sass.scan(shared / "h200/probe/sass_fatbin.txt")
    bare = sass.scan(shared / "h200/probe/sass_cubin.txt")
    assert fat.summary.ptx_architectures == ["sm_90"] and bare.summary.ptx_architectures == []
    for scan in (fat, bare):
        base = scan.opcodes.group_by("base").agg(pl.col("count").sum()).sort("base")
        assert dict(base.iter_rows()) == {
            "BRA": 1, "EXIT": 2, "FFMA": 1, "IMAD": 3, "ISETP": 1, "LDC": 4, "LDG": 2, "S2R": 1,
            "S2UR": 1, "STG": 1, "ULDC": 3,
        }  # fmt: skip
        assert scan.functions["padding_nop_count"].to_list() == [12]


def test_signatures_report_found_missing_with_evidence(cuobj: sass.SassScan) -> None:
    sig = cuobj.signatures
    found = sig.filter(pl.col("status") == "found").select("function", "signature").rows()
    assert sorted(found) == sorted(
        [
            ("_Z9wmma_gemmPK6__halfS1_Pfiii", "warp_mma"),
            ("_Z11local_spillPKfPfi", "local_memory_traffic"),
            ("_Z7vec_addPK6float4S1_PS_i", "global_load_128bit"),
            ("_Z7vec_addPK6float4S1_PS_i", "global_store_128bit"),
        ]
    )
    row = sig.filter((pl.col("function") == KERNELS[3]) & (pl.col("signature") == "global_load_128bit")).row(
        0, named=True
    )
    assert row["evidence"] == [
        {"address": 0xD0, "pattern": "LDG.128", "text": "LDG.E.128.CONSTANT R12, desc[UR4][R2.64] ;"},
        {"address": 0xF0, "pattern": "LDG.128", "text": "LDG.E.128.CONSTANT R16, desc[UR4][R4.64] ;"},
    ]
    # sm_90 is not sm_90a: the warpgroup-MMA signature does not apply, it is not "missing".
    hopper = sig.filter(pl.col("signature") == "hopper_warpgroup_mma")["status"].unique().to_list()
    assert hopper == ["not_applicable"]
    mma = sig.filter((pl.col("signature") == "warp_mma") & (pl.col("function") == KERNELS[0])).row(
        0, named=True
    )
    assert (mma["match_count"], mma["matched_patterns"]) == (10, ["HMMA"])
    assert mma["missing_patterns"] == ["IMMA", "BMMA", "DMMA", "QMMA", "OMMA"]


def test_signatures_ignore_function_names_and_comments(shared: Path) -> None:
    text = (shared / "h200/probe/sass_cubin.txt").read_text()
    renamed = text.replace("Function : axpy", "Function : hmma_red_ldl_kernel").replace(
        "/* 0x", "/* HMMA RED LDL 0x", 1
    )
    scan = sass.scan(renamed)
    assert scan.functions["function"].to_list() == ["hmma_red_ldl_kernel"]
    assert scan.signatures.filter(pl.col("status") == "found").height == 0


def test_evidence_limit_bounds_evidence_not_counts(shared: Path) -> None:
    scan = sass.scan(shared / SASS_DIR / "kernels_sm90.cuobjdump.sass", evidence_limit=1)
    row = scan.signatures.filter(pl.col("signature") == "local_memory_traffic").row(1, named=True)
    assert row["match_count"] == 18
    assert [e["pattern"] for e in row["evidence"]] == ["LDL", "STL"]


# --- bad input -----------------------------------------------------------------------------------


def test_binary_garbage_given_as_text_is_a_format_error(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.sass"
    garbage.write_bytes(random.Random(6).randbytes(4096))
    with pytest.raises(FormatError) as err:
        sass.scan(garbage)
    assert err.value.code == "format_invalid"
    run = gpuopt("sass", "scan", str(garbage), "--json")
    assert run.code == 2
    assert run.json()["errors"][0]["code"] == "format_invalid"


def test_cubin_bytes_passed_as_text_are_a_format_error(shared: Path) -> None:
    with pytest.raises(FormatError):
        sass.scan((shared / SASS_DIR / "kernels_sm90.cubin").read_bytes())


@pytest.mark.parametrize("fixture", ["kernels_sm90.cuobjdump.sass", "kernels_sm90.nvdisasm.sass"])
def test_truncated_listing_is_file_truncated(shared: Path, tmp_path: Path, fixture: str) -> None:
    lines = (shared / SASS_DIR / fixture).read_text().splitlines(keepends=True)
    last_instruction = max(i for i, line in enumerate(lines) if _INSTR.match(line))
    # Inside the middle of the listing, and inside the last function (before its padding ends).
    for cut in (len(lines) * 3 // 5, last_instruction - 3):
        at_line = tmp_path / f"cut{cut}.sass"
        at_line.write_text("".join(lines[:cut]))
        with pytest.raises(FormatError) as err:
            sass.scan(at_line)
        assert err.value.code == "file_truncated", (fixture, cut)
    mid_line = "".join(lines[:1000]) + lines[1000][:30]
    with pytest.raises(FormatError) as err:
        sass.scan(mid_line.encode())
    assert err.value.code == "file_truncated"
    run = gpuopt("sass", "functions", str(at_line), "--json")
    assert (run.code, run.json()["errors"][0]["code"]) == (2, "file_truncated")


@pytest.mark.parametrize(
    ("fixture", "old", "new"),
    [
        ("h200/sass/kernels_sm90.cuobjdump.sass", "code for sm_90", "code for sm_99"),
        ("h200/sass/kernels_sm90.nvdisasm.sass", ".target\tsm_90", ".target\tsm_95x"),
        ("public/sass/librecuda_kernel_struct_param.asm", "EF_CUDA_SM80 ", "EF_CUDA_SM81 "),
    ],
)
def test_unknown_architecture_line_fails_closed(
    shared: Path, tmp_path: Path, fixture: str, old: str, new: str
) -> None:
    text = (shared / fixture).read_text()
    assert old in text
    bad = tmp_path / "arch.sass"
    bad.write_text(text.replace(old, new, 1))
    with pytest.raises(InputError) as err:
        sass.scan(bad)
    assert err.value.code == "sass_arch_unknown"
    assert "sm_90" in (err.value.expected or "")
    run = gpuopt("sass", "scan", str(bad), "--json")
    assert (run.code, run.json()["errors"][0]["code"]) == (2, "sass_arch_unknown")


def test_text_that_is_not_a_listing(tmp_path: Path) -> None:
    for text, code in [
        (b"name,value\nHMMA,3\n", "format_invalid"),
        (b"", "format_invalid"),
        (b"\nFatbin ptx code:\n================\narch = sm_90\ncode version = [9,0]\n", "sass_no_functions"),
        (b"\tcode for sm_90\n\t\t/*0000*/  hello world ;\n", "format_invalid"),
    ]:
        with pytest.raises(InputError) as err:
            sass.scan(text)
        assert err.value.code == code, text


def test_invalid_catalog_is_refused(shared: Path, tmp_path: Path) -> None:
    bad = tmp_path / "catalog.json"
    bad.write_text('{"format": "gpuopt.sass_signatures", "version": 9, "signatures": []}')
    run = gpuopt("sass", "signatures", str(shared / SASS_DIR / "kernels_sm90.cuobjdump.sass"), "--catalog",
                 str(bad), "--json")  # fmt: skip
    assert (run.code, run.json()["errors"][0]["code"]) == (2, "sass_catalog_invalid")


def test_absent_disassembler_exits_3(
    shared: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import gpuopt.tools
    from gpuopt.cli import main
    from gpuopt.errors import ToolAbsentError

    monkeypatch.setattr(gpuopt.tools, "_candidates", lambda name: iter(()))
    sass._tool.cache_clear()
    try:
        with pytest.raises(ToolAbsentError) as err:
            sass.scan(shared / SASS_DIR / "kernels_sm90.cubin")
        assert err.value.exit_code == 3 and "cuobjdump" in err.value.message
        with pytest.raises(SystemExit) as exited:
            main(["sass", "scan", str(shared / SASS_DIR / "kernels_sm90.cubin"), "--json"])
        assert exited.value.code == 3
        assert '"tool_absent"' in capsys.readouterr().out
    finally:
        sass._tool.cache_clear()


# --- CLI -----------------------------------------------------------------------------------------


def test_cli_scan_of_a_binary_records_the_tool(shared: Path) -> None:
    import hashlib

    import blake3

    run = gpuopt("sass", "scan", str(shared / SASS_DIR / "kernels_sm90.cubin"), "--json")
    assert run.code == 0, run.stderr
    data = run.json()["data"]
    tool = data["source"]["tool"]
    assert data["source"]["kind"] == "binary" and data["source"]["binary_kind"] == "elf"
    assert tool["name"] == "cuobjdump" and tool["version"]
    assert tool["sha256"] == hashlib.sha256(Path(tool["path"]).read_bytes()).hexdigest()
    assert data["summary"]["stage"] == "sass"
    assert data["summary"]["instruction_count"] == 1375
    totals = {t["signature"]: (t["found"], t["missing"], t["not_applicable"]) for t in data["signatures"]}
    assert totals["local_memory_traffic"] == (1, 3, 0)
    assert (
        run.json()["provenance"]["inputs"][0]["blake3"]
        == blake3.blake3((shared / SASS_DIR / "kernels_sm90.cubin").read_bytes()).hexdigest()
    )


def test_cli_tables_and_filters(shared: Path, tmp_path: Path) -> None:
    listing = str(shared / SASS_DIR / "kernels_sm90.nvdisasm.sass")
    run = gpuopt("sass", "functions", listing, "--json")
    assert run.code == 0
    data = run.json()["data"]
    assert (data["stage"], data["table"]["total_rows"]) == ("sass", 4)
    assert [r["registers"] for r in data["table"]["rows"]] == [32, 32, 18, 22]
    run = gpuopt("sass", "opcodes", listing, "--function", "vec_add", "--limit", "0", "--json")
    rows = run.json()["data"]["table"]["rows"]
    assert sum(r["count"] for r in rows) == 24
    run = gpuopt("sass", "signatures", listing, "--status", "found", "--signature", "warp_mma", "--json")
    rows = run.json()["data"]["table"]["rows"]
    assert [(r["function"], r["status"]) for r in rows] == [(KERNELS[0], "found")]
    out = tmp_path / "ops.parquet"
    assert gpuopt("sass", "opcodes", listing, "--out", str(out)).code == 0
    assert pl.read_parquet(out).height == cuobj_rows(listing)
    bad = gpuopt("sass", "signatures", listing, "--signature", "no_such_key", "--json")
    assert (bad.code, bad.json()["errors"][0]["code"]) == (2, "sass_signature_unknown")


def cuobj_rows(listing: str) -> int:
    return sass.scan(listing).opcodes.height


def test_cli_reads_a_listing_from_stdin(shared: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "gpuopt", "sass", "scan", "-", "--json"],
        input=(shared / "h200/probe/sass_fatbin.txt").read_bytes(),
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert b'"function_count": 1' in done.stdout
