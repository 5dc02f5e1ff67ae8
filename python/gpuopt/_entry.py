"""The console script and ``python -m gpuopt``: the CLI imported inside a guard, so a runtime dependency
that is not installed (click, which the CLI is built on, or anything it imports first) is named with
exit 3 rather than a traceback raised before gpuopt's own error handling exists. Imports nothing but
the standard library and ``gpuopt.errors`` until then."""

from __future__ import annotations

import sys

from gpuopt.errors import dependency_missing, missing_package


def main(argv: list[str] | None = None) -> None:
    try:
        from gpuopt.cli import main as cli_main
    except ModuleNotFoundError as exc:
        package = missing_package(exc)
        if package is None:
            raise
        # No click, maybe no pydantic: no envelope can be built, so stderr alone (as the CLI does
        # without pydantic).
        error = dependency_missing(package, exc)
        sys.stderr.write(f"error[{error.code}]: {error.message}\n  expected: {error.expected}\n")
        sys.exit(error.exit_code)
    cli_main(argv)
