"""Start-up stays light: help and --version import no command module's heavy dependencies.

No timing here (the benchmark ``benchmarks/startup_bench.py`` measures); these tests check *what is
imported*, which is what makes start-up fast or slow.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from gpuopt.cli import _registry, cli

HEAVY = ("pydantic", "polars", "numpy", "gpuopt.models", "gpuopt._native", "importlib.metadata")

# Runs the CLI in-process for each argument list, then reports which heavy modules were imported.
_PROBE = """
import json, sys
from gpuopt.cli import main
heavy = json.loads(sys.argv[2])
found = {}
for args in json.loads(sys.argv[1]):
    try:
        main(args)
    except SystemExit as exc:
        assert exc.code == 0, (args, exc.code)
    now = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))
    found[" ".join(args)] = now
print(json.dumps(found))
"""


def _imported_after(argv: list[list[str]], heavy: tuple[str, ...] = HEAVY) -> dict[str, list[str]]:
    """For each argument list in turn (one process), the heavy modules imported so far."""
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv), json.dumps(heavy)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(run.stdout.splitlines()[-1]))


def _imported(argv: list[list[str]], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    return _imported_after(argv, heavy)[" ".join(argv[-1])]


def test_root_help_imports_no_command_module() -> None:
    assert _imported([["--help"]], (*HEAVY, "gpuopt.cli.nsys", "gpuopt.cli.torch_trace")) == []


def test_every_area_help_imports_neither_pydantic_nor_polars() -> None:
    found = _imported_after([[area, "--help"] for area in sorted(_registry.commands())])
    assert {args: mods for args, mods in found.items() if mods} == {}


def test_subcommand_help_imports_neither_pydantic_nor_polars() -> None:
    argv = [["nsys", "stats", "--help"], ["torch", "summary", "--help"], ["ncu", "launches", "--help"]]
    assert _imported(argv) == []


def test_version_loads_the_native_module_but_not_pydantic_or_polars() -> None:
    found = _imported([["--version"]])
    assert "gpuopt._native" in found
    assert not [
        m
        for m in found
        if m.startswith(("pydantic", "polars", "numpy", "gpuopt.models", "importlib.metadata"))
    ]


def test_version_is_the_one_importlib_metadata_finds() -> None:
    """The dist-info folder read by name gives what ``importlib.metadata`` would (without its imports)."""
    from importlib.metadata import version

    import gpuopt

    assert gpuopt._installed_version() == version("gpuopt") == gpuopt.__version__


def test_version_reader_skips_unreadable_entries_and_finds_none_outside_an_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpuopt

    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "gpuopt-9.8.7.dist-info").mkdir()
    (tmp_path / "site" / "gpuoptx-1.0.dist-info").mkdir()
    (tmp_path / "file.zip").write_bytes(b"PK")  # a file on sys.path, as a zipped stdlib is
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(tmp_path / "file.zip"), str(tmp_path)])
    assert gpuopt._installed_version() is None
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(tmp_path / "site")])
    assert gpuopt._installed_version() == "9.8.7"


@pytest.mark.parametrize("name", sorted(_registry.commands()))
def test_registry_line_is_the_commands_own_short_help(name: str) -> None:
    command = _registry.load(name)
    assert command.name == name
    assert _registry.commands()[name].short_help == command.get_short_help_str(limit=10_000)


def test_root_help_equals_the_eagerly_loaded_listing() -> None:
    eager = click.Group(name="gpuopt", commands={n: _registry.load(n) for n in _registry.commands()})
    lazy_ctx = click.Context(cli, info_name="gpuopt", max_content_width=110, terminal_width=110)
    eager_ctx = click.Context(eager, info_name="gpuopt", max_content_width=110, terminal_width=110)
    lazy, plain = click.HelpFormatter(width=110), click.HelpFormatter(width=110)
    cli.format_commands(lazy_ctx, lazy)
    eager.format_commands(eager_ctx, plain)
    assert lazy.getvalue() == plain.getvalue()
    assert "nsys" in lazy.getvalue()


def test_nsys_stats_csv_and_json_import_neither_pydantic_nor_polars(shared: Path) -> None:
    """The engine makes the CSV and the --json envelope of `nsys stats` (issue 16: process start-up is
    most of a small report's time); the table for people and --sort/--out still build a DataFrame."""
    eager = str(shared / "h200" / "nsys" / "eager.sqlite")
    heavy = ("pydantic", "polars", "numpy", "gpuopt.models")
    stats = ["nsys", "stats", eager, "--report", "cuda_gpu_kern_sum"]
    argv = [[*stats, "--csv"], [*stats, "--json"], [*stats, "--json", "--sort", "name"]]
    found = _imported_after(argv, heavy)
    assert found[" ".join([*stats, "--csv"])] == []
    assert found[" ".join([*stats, "--json"])] == []
    assert "polars" in found[" ".join([*stats, "--json", "--sort", "name"])]
