from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuopt import tools
from gpuopt.errors import ToolAbsentError


@pytest.mark.parametrize(
    ("output", "version"),
    [
        (
            "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n",
            "13.0.88",
        ),
        (
            "NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2025.3.1.0 (build 36398880)\n",
            "2025.3.1.0",
        ),
        ("NVIDIA Nsight Systems version 2025.3.2.474-253236389321v0\n", "2025.3.2.474"),
        ("no version here\n", None),
    ],
)
def test_parse_version(output: str, version: str | None) -> None:
    assert tools.parse_version(output)[0] == version


def test_pip_cuda_tools_are_found_and_identified() -> None:
    # The [test] extra installs NVIDIA's pip wheels of nvcc/cuobjdump/nvdisasm.
    found = tools.find_tool("cuobjdump")
    assert found is not None
    assert found.version is not None and found.version[0].isdigit()
    assert len(found.sha256) == 64 and Path(found.path).is_file()


def test_absent_tool_is_exit_3_with_install_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    if any(os.path.exists(p) for p in ("/usr/local/cuda/bin/compute-sanitizer",)):
        pytest.skip("a CUDA toolkit is installed here")
    with pytest.raises(ToolAbsentError) as info:
        tools.require_tool("compute-sanitizer")
    assert info.value.exit_code == 3 and info.value.code == "tool_absent"
    assert info.value.expected is not None and "CUDA toolkit" in info.value.expected


def test_cuobjdump_hint_names_nvdisasm_too() -> None:
    # CUDA 13's cuobjdump runs nvdisasm to print SASS: installing the cuobjdump wheel alone is not enough.
    hint = tools._INSTALL_HINT["cuobjdump"]
    assert "nvidia-cuda-cuobjdump" in hint and "nvidia-cuda-nvdisasm" in hint
