"""The working spinner: shown to a person at a terminal, never to pipes or with --json."""

from __future__ import annotations

from pathlib import Path

from conftest import gpuopt, gpuopt_in_terminal


def test_a_person_at_a_terminal_sees_the_spinner_then_the_table(shared: Path) -> None:
    code, out = gpuopt_in_terminal("nsys", "kernels", str(shared / "h200" / "nsys" / "eager.sqlite"))
    assert code == 0
    spinner, _, table = out.rpartition("\x1b[?25h")  # rich hides the cursor while it spins
    assert "gpuopt nsys kernels" in spinner and "0:00:0" in spinner
    assert "cuda_gpu_kern_sum" in table and "4.42 ms" in table


def test_json_and_pipes_get_no_spinner(shared: Path) -> None:
    file = str(shared / "h200" / "nsys" / "eager.sqlite")
    code, out = gpuopt_in_terminal("nsys", "kernels", file, "--json")
    assert code == 0 and "\x1b[" not in out and '"ok": true' in out
    piped = gpuopt("nsys", "kernels", file)
    assert piped.code == 0 and piped.stderr == "" and "\x1b[" not in piped.stdout
