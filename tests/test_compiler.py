"""Compiler reports and caches: ptxas -v, cuobjdump -res-usage, Triton 3.6 and TorchInductor fixtures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt import compiler
from gpuopt.errors import FormatError, InputError

TRITON = "h200/triton"
MM = "h200/triton/VSJU4SVKNWVE5J7O7AORNNFSDXWNMZL4EN4TFZU25Q33IAWDKZKA"
INDUCTOR = "h200/inductor"


def test_ptxas_fixture(shared: Path) -> None:
    parsed = compiler.ptxas(shared / "h200/sass/ptxas_v_sm90.txt")
    r = parsed.report
    rows = [(f.function, f.target, f.kind, f.registers, f.barriers, f.stack_frame_bytes, f.spill_store_bytes,
             f.spill_load_bytes, f.cumulative_stack_bytes) for f in r.functions]  # fmt: skip
    assert rows == [
        ("_Z9wmma_gemmPK6__halfS1_Pfiii", "sm_90", "entry", 32, 0, 0, 0, 0, None),
        ("_Z11local_spillPKfPfi", "sm_90", "entry", 32, 0, 256, 0, 0, 256),
        ("_Z12strided_copyPKfPfii", "sm_90", "entry", 18, 0, 0, 0, 0, None),
        ("_Z7vec_addPK6float4S1_PS_i", "sm_90", "entry", 22, 0, 0, 0, 0, None),
    ]
    assert [f.compile_time_ms for f in r.functions] == [28.575, 57.237, 7.585, 1.881]
    assert r.global_bytes == [0] and r.messages == [] and parsed.unmodeled == []
    assert parsed.inputs[0].path.endswith("ptxas_v_sm90.txt")


def test_ptxas_older_format_with_smem_cmem_spills_and_warnings() -> None:
    # The CUDA 11/12 layout: sizes on the `Used` line, a device function, a spilling kernel, a warning.
    text = """ptxas info    : 0 bytes gmem, 24 bytes cmem[4]
ptxas info    : Compiling entry function '_Z4stepPfi' for 'sm_80'
ptxas info    : Function properties for _Z4stepPfi
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 255 registers, 16384 bytes smem, 372 bytes cmem[0], 8 bytes cmem[2]
ptxas info    : Function properties for _Z6helperf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas warning : Registers are spilled to local memory in function '_Z4stepPfi', 4 bytes spill stores
"""
    r = compiler.ptxas(text).report
    step, helper = r.functions
    assert (step.kind, step.registers, step.shared_bytes, step.constant_bytes) == (
        "entry",
        255,
        16384,
        {"0": 372, "2": 8},
    )
    assert (step.stack_frame_bytes, step.spill_store_bytes, step.spill_load_bytes) == (8, 4, 4)
    assert (helper.kind, helper.function, helper.registers, helper.target) == (
        "function",
        "_Z6helperf",
        None,
        "sm_80",
    )
    assert r.global_bytes == [0]
    assert [m.level for m in r.messages] == ["warning"]


def test_ptxas_bad_input() -> None:
    with pytest.raises(FormatError) as err:
        compiler.ptxas("just some\ntext\n")
    assert err.value.code == "format_invalid"
    with pytest.raises(FormatError) as err:
        compiler.ptxas(
            b"ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
            b"ptxas info    : Function properties for k\n"
        )
    assert err.value.code == "file_truncated"
    with pytest.raises(FormatError) as err:
        compiler.ptxas(b"ptxas info : \x00\x01\x02")
    assert err.value.code == "format_invalid"


@pytest.mark.parametrize(
    "item",
    [
        "Used -5 registers",
        "Used 100000000000000000000000 registers",
        "Used 8 registers, used 99 barriers",
        "Used 8 registers, -4 bytes smem",
        "Used 8 registers, 1099511627776000 bytes cmem[0]",
    ],
)
def test_ptxas_counts_it_cannot_print_are_refused_not_reported(item: str) -> None:
    """A negative count or one past what any GPU holds is not ptxas's text: it was dropped as an
    unread item (`-5`) or reported as read (10^23 registers)."""
    text = f"ptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : {item}\n"
    with pytest.raises(FormatError) as err:
        compiler.ptxas(text)
    assert err.value.code == "format_invalid"
    assert "100000000000000000000000" not in str(err.value)  # its length, not its digits
    frame = (
        "ptxas info    : Function properties for k\n"
        "    -8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    )
    with pytest.raises(FormatError):
        compiler.ptxas(
            f"ptxas info    : Compiling entry function 'k' for 'sm_90'\n{frame}"
            "ptxas info    : Used 8 registers\n"
        )


@pytest.mark.parametrize("item", ["REG:-3", "REG:70000", "STACK:1000000000000000000"])
def test_res_usage_counts_it_cannot_print_are_refused(item: str) -> None:
    with pytest.raises(FormatError) as err:
        compiler.res_usage(f"Resource usage:\n Function k:\n  {item} SHARED:0\n")
    assert err.value.code == "format_invalid"


@pytest.mark.parametrize("items", ["REG:32 REG:64", "CONSTANT[0]:8 CONSTANT[0]:9"])
def test_a_resource_listed_twice_is_refused_naming_the_file(tmp_path: Path, items: str) -> None:
    """A trial's `REG:32 REG:64` was read as 64 registers, exit 0: the last one silently won."""
    file = tmp_path / "r.txt"
    file.write_text(f"Resource usage:\n Function k:\n  {items} STACK:0\n")
    with pytest.raises(FormatError) as err:
        compiler.res_usage(file)
    assert err.value.code == "format_invalid" and "twice" in err.value.message
    assert err.value.path == str(file)
    ok = compiler.res_usage("Resource usage:\n Function k:\n  REG:32 CONSTANT[0]:8 CONSTANT[2]:4 STACK:0\n")
    assert ok.report.functions[0].constant_bytes == {"0": 8, "2": 4}


def test_res_usage_fixture_and_cross_check_with_ptxas(shared: Path) -> None:
    r = compiler.res_usage(shared / "h200/sass/kernels_sm90.res-usage.txt").report
    rows = [
        (f.function, f.registers, f.stack_bytes, f.shared_bytes, f.local_bytes, f.constant_bytes)
        for f in r.functions
    ]
    assert rows == [
        ("_Z9wmma_gemmPK6__halfS1_Pfiii", 32, 0, 0, 0, {"0": 564}),
        ("_Z11local_spillPKfPfi", 32, 256, 0, 0, {"0": 548}),
        ("_Z12strided_copyPKfPfii", 18, 0, 0, 0, {"0": 552}),
        ("_Z7vec_addPK6float4S1_PS_i", 22, 0, 0, 0, {"0": 556}),
    ]
    assert [f.arch for f in r.functions] == [None] * 4  # a bare cubin's report names no architecture
    ptxas = compiler.ptxas(shared / "h200/sass/ptxas_v_sm90.txt").report
    assert {f.function: f.registers for f in r.functions} == {
        f.function: f.registers for f in ptxas.functions
    }
    assert {f.function: f.stack_bytes for f in r.functions} == {
        f.function: f.stack_frame_bytes for f in ptxas.functions
    }


def test_res_usage_of_a_binary_runs_cuobjdump(shared: Path) -> None:
    parsed = compiler.res_usage(shared / "h200/sass/kernels_sm90.cubin")
    text = compiler.res_usage(shared / "h200/sass/kernels_sm90.res-usage.txt").report
    assert parsed.report.tool is not None and parsed.report.tool.name == "cuobjdump"
    assert [f.model_dump() for f in parsed.report.functions] == [f.model_dump() for f in text.functions]


def test_res_usage_bad_input() -> None:
    with pytest.raises(FormatError) as err:
        compiler.res_usage("Fatbin elf code:\narch = sm_90\n")
    assert err.value.code == "format_invalid"
    with pytest.raises(FormatError) as err:
        compiler.res_usage("Resource usage:\n Common:\n  GLOBAL:0\n Function k:\n")
    assert err.value.code == "file_truncated"


@pytest.fixture(scope="module")
def mm(shared: Path) -> compiler.Parsed[compiler.TritonReport]:
    return compiler.triton(shared / TRITON)


def test_triton_cache_metadata_and_stages(shared: Path, mm: compiler.Parsed[compiler.TritonReport]) -> None:
    (k,) = mm.report.kernels
    assert (
        k.name,
        k.backend,
        k.arch,
        k.num_warps,
        k.num_ctas,
        k.num_stages,
        k.shared_bytes,
        k.triton_version,
    ) == ("mm", "cuda", "90", 8, 1, 3, 98304, "3.6.0")
    assert k.hash == json.loads((shared / MM / "mm.json").read_text())["hash"]
    assert [s.stage for s in k.stages] == ["source", "ttir", "ttgir", "llvm_ir", "ptx", "cubin"]
    assert k.missing_stages == []
    assert [s.size_bytes for s in k.stages] == [
        (shared / MM / f"mm.{x}").stat().st_size for x in ("source", "ttir", "ttgir", "llir", "ptx", "cubin")
    ]
    assert k.module_attributes == {
        "ttg.num-ctas": "1", "ttg.num-warps": "8", "ttg.target": "cuda:90", "ttg.threads-per-warp": "32",
    }  # fmt: skip
    assert (k.ptx_target, k.ptx_version) == ("sm_90a", "8.7")
    assert "tmem_size" in k.unmodeled_metadata and "num_warps" not in k.unmodeled_metadata


def test_triton_facts_carry_their_stage(shared: Path, mm: compiler.Parsed[compiler.TritonReport]) -> None:
    (k,) = mm.report.kernels
    ops = {(o.stage, o.op): o.count for o in k.ops}
    ttgir = (shared / MM / "mm.ttgir").read_text()
    assert ops[("ttir", "tt.dot")] == 1
    assert ops[("ttgir", "ttng.warp_group_dot")] == len(re.findall(r"= ttng\.warp_group_dot ", ttgir)) == 1
    assert ops[("ttgir", "ttg.async_copy_global_to_local")] == 6
    assert ops[("ptx", "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16")] == 4
    assert ops[("llvm_ir", "llvm.nvvm.wgmma.fence.sync.aligned")] == 1
    assert {o.stage for o in k.ops} == {"source", "ttir", "ttgir", "llvm_ir", "ptx"}
    (f,) = k.sass or []
    assert (f.stage, f.function, f.arch, f.instruction_count) == ("sass", "mm", "sm_90a", 389)
    assert (f.class_counts["tensor_core"], f.class_counts["async_copy"]) == (4, 30)
    assert set(f.signatures_found) == {
        "hopper_warpgroup_mma", "async_copy_ldgsts", "ldmatrix", "cta_barrier", "global_store_128bit",
    }  # fmt: skip
    # nvdisasm's register count equals NVIDIA's cuobjdump -res-usage of the same cubin.
    (ru,) = compiler.res_usage(shared / MM / "mm.cubin").report.functions
    assert f.registers == ru.registers == 107
    assert not claim_keys(mm.report.model_dump())


def claim_keys(node: object) -> list[str]:
    """Keys that would claim fusion or elimination; facts never carry such a field."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if any(word in str(key) for word in ("fus", "eliminat", "fused")):
                found.append(str(key))
            found += claim_keys(value)
    elif isinstance(node, list):
        for value in node:
            found += claim_keys(value)
    return found


def test_triton_without_sass_and_bad_paths(shared: Path, tmp_path: Path) -> None:
    report = compiler.triton(shared / MM / "mm.json", sass=False).report
    assert report.kernels[0].sass is None and report.tool is None
    with pytest.raises(InputError) as err:
        compiler.triton(tmp_path)
    assert err.value.code == "triton_cache_empty"
    with pytest.raises(InputError) as err:
        compiler.triton(tmp_path / "missing")
    assert err.value.code == "file_not_found"


@pytest.fixture(scope="module")
def ind(shared: Path) -> compiler.Parsed[compiler.InductorReport]:
    # SASS of the cached cubins is checked on one kernel below; twelve disassemblies add little.
    return compiler.inductor(shared / INDUCTOR, sass=False)


def test_inductor_output_code_launches(ind: compiler.Parsed[compiler.InductorReport]) -> None:
    codes = {Path(c.file.path).parent.name: c for c in ind.report.output_code}
    assert set(codes) == {"il", "xj"}
    xj = codes["xj"]
    assert len(xj.kernels_defined) == 7 and len(xj.launches) == 33
    kinds = [launch.kind for launch in xj.launches]
    assert (kinds.count("triton"), kinds.count("extern"), kinds.count("aten")) == (13, 16, 4)
    first = xj.launches[0]
    assert (first.order, first.kind, first.name) == (0, "triton", "triton_per_fused_native_layer_norm_0")
    assert (first.source_nodes, first.original_aten) == (["layer_norm"], ["aten.native_layer_norm"])
    sdpa = xj.launches[2]
    assert (sdpa.kind, sdpa.name) == ("aten", "torch.ops.aten._scaled_dot_product_cudnn_attention.default")
    assert len(codes["il"].launches) == 17 and first.stage == "source"


def test_inductor_kernels_and_compiled_links(ind: compiler.Parsed[compiler.InductorReport]) -> None:
    kernels = {k.name: k for k in ind.report.kernels}
    assert len(kernels) == 8
    heur = sorted((k.heuristic or "") for k in kernels.values())
    assert heur == ["persistent_reduction"] * 5 + ["pointwise"] * 3
    gelu = kernels["triton_poi_fused__unsafe_view_gelu_2"]
    assert (gelu.num_load, gelu.num_store, gelu.num_reduction, gelu.mutated_arg_names) == (
        1,
        1,
        0,
        ["in_out_ptr0"],
    )
    assert gelu.size_hints == {"x": 33554432} and gelu.device_cc == 90
    assert gelu.best_config == {"XBLOCK": 1024, "num_warps": 4, "num_stages": 1, "found_by_coordesc": False}
    assert gelu.triton_link == "best_config_hash" and gelu.triton_cache_entries_of_that_name == 2
    assert gelu.triton is not None and Path(gelu.triton.cache_dir).name == gelu.triton_cache_hash
    assert gelu.triton.num_warps == 4  # the autotuned config's build, not the other one
    ln = kernels["triton_per_fused_native_layer_norm_0"]
    assert (ln.best_config, ln.triton_link) == (None, "only_kernel_of_that_name")
    assert ln.triton is not None and ln.triton.sass is None
    (compiled,) = compiler.triton(ln.triton.cache_dir).report.kernels
    assert compiled.sass is not None and compiled.sass[0].function == ln.name
    assert "warp_shuffle" in compiled.sass[0].signatures_found
    assert compiled.sass[0].class_counts["warp_shuffle"] == 10
    assert not claim_keys(ind.report.model_dump())
    unmodeled = {(u.kind, u.name): u.count for u in ind.unmodeled}
    assert unmodeled[("inductor_cache_entry", "fxgraph (pickled, not read)")] == 2
    assert unmodeled[("inductor_cache_entry", "aotautograd (pickled, not read)")] == 2


def test_inductor_single_file_and_nothing_found(shared: Path, tmp_path: Path) -> None:
    one = next((shared / INDUCTOR / "yu").glob("*.py"))
    r = compiler.inductor(one, sass=False).report
    assert [k.name for k in r.kernels] == ["triton_poi_fused__unsafe_view_add_5"] and r.output_code == []
    (tmp_path / "x.py").write_text("print('hello')\n")
    with pytest.raises(InputError) as err:
        compiler.inductor(tmp_path, sass=False)
    assert err.value.code == "inductor_nothing_found"


def test_cli_compiler_commands(shared: Path, tmp_path: Path) -> None:
    run = gpuopt("compiler", "ptxas", str(shared / "h200/sass/ptxas_v_sm90.txt"), "--json")
    assert run.code == 0 and run.json()["data"]["functions"][1]["stack_frame_bytes"] == 256
    run = gpuopt("compiler", "res-usage", str(shared / "h200/sass/kernels_sm90.res-usage.txt"))
    assert run.code == 0 and "_Z11local_spillPKfPfi" in run.stdout
    run = gpuopt("compiler", "triton", str(shared / MM), "--no-sass", "--json")
    assert run.code == 0 and run.json()["data"]["kernels"][0]["num_stages"] == 3
    assert "claims_note" in run.json()["data"]
    run = gpuopt("compiler", "inductor", str(shared / INDUCTOR), "--no-sass", "--json")
    assert run.code == 0 and len(run.json()["data"]["kernels"]) == 8
    assert {u["kind"] for u in run.json()["unmodeled"]} == {"inductor_cache_entry"}
    cut = tmp_path / "ptxas.txt"
    cut.write_text("ptxas info    : Compiling entry function 'k' for 'sm_90'\n")
    run = gpuopt("compiler", "ptxas", str(cut), "--json")
    assert (run.code, run.json()["errors"][0]["code"]) == (2, "file_truncated")
