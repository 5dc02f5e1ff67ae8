"""Kernels compiled here with NVIDIA's pip nvcc (sm_80, sm_90, sm_90a), then disassembled both ways.

NVIDIA's own tools are the oracles: the same cubin through cuobjdump and nvdisasm must give the same
per-function opcode counts, and nvdisasm's register counts must equal ``ptxas -v`` and
``cuobjdump -res-usage``.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from gpuopt import compiler, sass
from gpuopt.tools import find_tool

# Long (real driver loops, a browser, servers): started first, so the test workers end together.
pytestmark = pytest.mark.starts_first

AMPERE = r"""
#include <cstdint>
__global__ void ldmatrix_kernel(unsigned* out) {
  __shared__ alignas(16) unsigned short tile[32 * 8 * 4];
  tile[threadIdx.x] = threadIdx.x;
  __syncthreads();
  unsigned a0, a1, a2, a3;
  uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(&tile[(threadIdx.x % 32) * 8]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(addr));
  out[threadIdx.x] = a0 + a1 + a2 + a3;
}
__global__ void atomic_kernel(int* total, const int* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(total, in[i]);
}
__global__ void cp_async_kernel(float* out, const float* in) {
  __shared__ alignas(16) float buf[256 * 4];
  uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(&buf[threadIdx.x * 4]));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dst), "l"(in + threadIdx.x * 4));
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();
  out[threadIdx.x] = buf[(threadIdx.x * 7) % 1024];
}
__global__ void vec_add(const float4* a, const float4* b, float4* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float4 x = a[i], y = b[i]; c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w); }
}
"""

HOPPER = r"""
#include <cstdint>
__global__ void tma_kernel(float* out, const __grid_constant__ uint64_t tmap_storage) {
  __shared__ alignas(128) float tile[32 * 32];
  __shared__ alignas(8) uint64_t bar;
  uint32_t s_tile = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
  uint32_t s_bar = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  const void* tmap = &tmap_storage;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" :: "r"(s_bar));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 4096;\n" :: "r"(s_bar));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n"
        :: "r"(s_tile), "l"(tmap), "r"(0), "r"(0), "r"(s_bar) : "memory");
  }
  asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra W;\n}\n"
               :: "r"(s_bar));
  out[threadIdx.x] = tile[threadIdx.x];
}
__global__ void bulk_kernel(float* out, const float* in) {
  __shared__ alignas(128) float buf[256];
  __shared__ alignas(8) uint64_t bar;
  uint32_t s_buf = static_cast<uint32_t>(__cvta_generic_to_shared(buf));
  uint32_t s_bar = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" :: "r"(s_bar));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 1024;\n" :: "r"(s_bar));
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 1024, [%2];\n"
                 :: "r"(s_buf), "l"(in), "r"(s_bar) : "memory");
  }
  asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra W;\n}\n"
               :: "r"(s_bar));
  out[threadIdx.x] = buf[threadIdx.x];
}
"""

HOPPER_A = r"""
#include <cstdint>
__global__ void wgmma_kernel(float* out, uint64_t da, uint64_t db) {
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile("wgmma.fence.sync.aligned;\n");
  asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;\n"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(da), "l"(db));
  asm volatile("wgmma.commit_group.sync.aligned;\n");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  out[threadIdx.x * 4 + 0] = d0; out[threadIdx.x * 4 + 1] = d1;
  out[threadIdx.x * 4 + 2] = d2; out[threadIdx.x * 4 + 3] = d3;
}
__global__ void __launch_bounds__(128, 1) setmaxnreg_kernel(int* out) {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
  out[threadIdx.x] = threadIdx.x;
}
"""

BLACKWELL = r"""
#include <cstdint>
__global__ void tcgen05_kernel(uint32_t* out, uint64_t adesc, uint64_t bdesc, uint32_t idesc) {
  __shared__ uint32_t taddr_slot;
  uint32_t slot = static_cast<uint32_t>(__cvta_generic_to_shared(&taddr_slot));
  if (threadIdx.x < 32) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;\n" :: "r"(slot));
  }
  __syncthreads();
  uint32_t taddr = taddr_slot;
  if (threadIdx.x == 0) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
                 " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
                 :: "r"(taddr), "l"(adesc), "l"(bdesc), "r"(idesc), "r"(1));
  }
  __syncthreads();
  out[threadIdx.x] = taddr;
}
"""


@dataclass
class Built:
    cubin: Path
    ptxas_stderr: str


@pytest.fixture(scope="module")
def nvcc() -> str:
    tool = find_tool("nvcc")
    if tool is None:
        pytest.skip("nvcc is absent (pip install 'gpuopt[cuda-tools]')")
    return tool.path


def _build(nvcc: str, folder: Path, name: str, source: str, arch: str) -> Built:
    cu = folder / f"{name}.cu"
    cu.write_text(source)
    cubin = folder / f"{name}.cubin"
    # -lineinfo keeps the code the same and lets `nvdisasm -g` annotate source lines.
    done = subprocess.run(
        [
            nvcc,
            f"-arch={arch}",
            "-cubin",
            "-lineinfo",
            "-maxrregcount=128",
            "-Xptxas",
            "-v",
            "-o",
            str(cubin),
            str(cu),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return Built(cubin, done.stderr)


@pytest.fixture(scope="module")
def built(nvcc: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    folder = tmp_path_factory.mktemp("kernels")
    return {
        "sm_80": _build(nvcc, folder, "ampere", AMPERE, "sm_80"),
        "sm_90": _build(nvcc, folder, "hopper", HOPPER, "sm_90"),
        "sm_90a": _build(nvcc, folder, "hopper_a", HOPPER_A, "sm_90a"),
        "sm_100a": _build(nvcc, folder, "blackwell_a", BLACKWELL, "sm_100a"),
    }


@pytest.fixture(scope="module")
def scans(built: dict[str, Built]) -> dict[tuple[str, str], sass.SassScan]:
    return {
        (arch, tool): sass.scan(b.cubin, tool=tool)
        for arch, b in built.items()
        for tool in ("cuobjdump", "nvdisasm")
    }


def found(scan: sass.SassScan) -> set[tuple[str, str]]:
    rows = scan.signatures.filter(pl.col("status") == "found").select("function", "signature").rows()
    return {(f, s) for f, s in rows}


ARCHS = ["sm_80", "sm_90", "sm_90a", "sm_100a"]


@pytest.mark.parametrize("arch", ARCHS)
def test_cuobjdump_and_nvdisasm_agree_per_function(
    scans: dict[tuple[str, str], sass.SassScan], arch: str
) -> None:
    a, b = scans[(arch, "cuobjdump")], scans[(arch, "nvdisasm")]
    assert (a.summary.dialect, b.summary.dialect) == ("cuobjdump", "nvdisasm")
    assert a.summary.architectures == b.summary.architectures == [arch]
    key = ["function", "opcode"]
    assert a.opcodes.drop("function_index").sort(key).equals(b.opcodes.drop("function_index").sort(key))
    cols = ["function", "instruction_count", "padding_nop_count", "predicated_count", "backward_branch_count"]
    assert a.functions.select(cols).sort("function").equals(b.functions.select(cols).sort("function"))
    assert found(a) == found(b)


@pytest.mark.parametrize("arch", ARCHS)
def test_nvdisasm_registers_equal_ptxas_and_res_usage(
    built: dict[str, Built], scans: dict[tuple[str, str], sass.SassScan], arch: str
) -> None:
    listed = dict(scans[(arch, "nvdisasm")].functions.select("function", "registers").iter_rows())
    by_ptxas = {
        f.function: f.registers for f in compiler.ptxas(built[arch].ptxas_stderr.encode()).report.functions
    }
    by_res_usage = {f.function: f.registers for f in compiler.res_usage(built[arch].cubin).report.functions}
    assert listed == by_ptxas == by_res_usage
    assert all(r for r in listed.values())


def test_ampere_signatures(scans: dict[tuple[str, str], sass.SassScan]) -> None:
    got = found(scans[("sm_80", "cuobjdump")])
    assert ("_Z15ldmatrix_kernelPj", "ldmatrix") in got
    assert ("_Z15cp_async_kernelPfPKf", "async_copy_ldgsts") in got
    assert ("_Z13atomic_kernelPiPKii", "global_atomics") in got
    assert ("_Z7vec_addPK6float4S1_PS_i", "global_load_128bit") in got
    assert ("_Z15ldmatrix_kernelPj", "cta_barrier") in got
    # Hopper-only mechanisms cannot be "missing" on sm_80: they do not apply.
    sig = scans[("sm_80", "cuobjdump")].signatures
    assert set(sig.filter(pl.col("signature").is_in(["tma_tensor_copy", "mbarrier"]))["status"]) == {
        "not_applicable"
    }


def test_hopper_tma_bulk_copy_and_mbarrier(scans: dict[tuple[str, str], sass.SassScan]) -> None:
    scan = scans[("sm_90", "nvdisasm")]
    got = found(scan)
    assert ("_Z10tma_kernelPfm", "tma_tensor_copy") in got
    assert ("_Z11bulk_kernelPfPKf", "bulk_copy") in got
    assert {("_Z10tma_kernelPfm", "mbarrier"), ("_Z11bulk_kernelPfPKf", "mbarrier")} <= got
    assert ("_Z11bulk_kernelPfPKf", "tma_tensor_copy") not in got
    tma = scan.opcodes.filter(pl.col("class") == "tma_bulk_copy").select("function", "opcode", "count").rows()
    assert sorted(tma) == [("_Z10tma_kernelPfm", "UTMALDG.2D", 1), ("_Z11bulk_kernelPfPKf", "UBLKCP.S.G", 1)]


def test_hopper_a_wgmma_yields_hgmma(scans: dict[tuple[str, str], sass.SassScan]) -> None:
    scan = scans[("sm_90a", "cuobjdump")]
    got = found(scan)
    assert ("_Z12wgmma_kernelPfmm", "hopper_warpgroup_mma") in got
    assert ("_Z17setmaxnreg_kernelPi", "register_reallocation") in got
    assert ("_Z17setmaxnreg_kernelPi", "hopper_warpgroup_mma") not in got
    ops = dict(
        scan.opcodes.filter(pl.col("function") == "_Z12wgmma_kernelPfmm")
        .select("opcode", "count")
        .iter_rows()
    )
    assert ops["HGMMA.64x8x16.F32"] == 1
    assert ops["WARPGROUP.ARRIVE"] == 1
    row = scan.signatures.filter(
        (pl.col("function") == "_Z12wgmma_kernelPfmm") & (pl.col("signature") == "hopper_warpgroup_mma")
    ).row(0, named=True)
    assert row["evidence"][0]["text"].startswith("HGMMA.64x8x16.F32 ")


def test_blackwell_tcgen05_yields_utchmma(scans: dict[tuple[str, str], sass.SassScan]) -> None:
    scan = scans[("sm_100a", "nvdisasm")]
    assert ("_Z14tcgen05_kernelPjmmj", "blackwell_tcgen05_mma") in found(scan)
    ops = dict(scan.opcodes.select("opcode", "class").iter_rows())
    assert ops["UTCHMMA"] == "tensor_core"
    assert ops["UTCATOMSWS.FIND_AND_SET.ALIGN"] == "tensor_memory"
    # Warpgroup MMA is sm_90a-only: on sm_100a it does not apply.
    hopper = scan.signatures.filter(pl.col("signature") == "hopper_warpgroup_mma")["status"].to_list()
    assert hopper == ["not_applicable"]


def test_nvdisasm_line_info_is_counted_and_changes_no_counts(
    built: dict[str, Built], scans: dict[tuple[str, str], sass.SassScan]
) -> None:
    tool = find_tool("nvdisasm")
    assert tool is not None
    listing = subprocess.run(
        [tool.path, "-g", str(built["sm_80"].cubin)], capture_output=True, check=True
    ).stdout
    annotated = sass.scan(listing)
    plain = scans[("sm_80", "nvdisasm")]
    key = ["function", "opcode"]
    assert annotated.opcodes.sort(key).equals(plain.opcodes.sort(key))
    lines = dict(annotated.functions.select("function", "line_info_count").iter_rows())
    assert sum(lines.values()) == listing.count(b"\t//## File ")
    assert all(n > 0 for n in lines.values())
    assert plain.functions["line_info_count"].to_list() == [0] * plain.functions.height


def test_fatbin_with_two_architectures_and_ptx(nvcc: str, tmp_path: Path) -> None:
    cu = tmp_path / "ampere.cu"
    cu.write_text(AMPERE)
    fatbin = tmp_path / "ampere.fatbin"
    done = subprocess.run(
        [nvcc, "-fatbin", "-gencode", "arch=compute_80,code=sm_80",
         "-gencode", "arch=compute_90,code=[sm_90,compute_90]", "-o", str(fatbin), str(cu)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    scan = sass.scan(fatbin)
    assert scan.source.binary_kind == "fatbin"
    assert scan.summary.architectures == ["sm_80", "sm_90"]
    assert scan.summary.ptx_architectures == ["sm_90"]
    assert scan.summary.cubin_count == 2
    per_arch = scan.functions.group_by("arch").agg(pl.len()).sort("arch").rows()
    assert per_arch == [("sm_80", 4), ("sm_90", 4)]
    assert set(scan.functions.filter(pl.col("arch") == "sm_90")["cubin_index"]) == {1}
    with pytest.raises(Exception) as err:
        sass.scan(fatbin, tool="nvdisasm")
    assert getattr(err.value, "code", None) == "sass_tool_unsuited"
