"""The console script and ``python -m gpuopt``: the CLI imported inside a guard, so a runtime dependency
that is not installed (click, which the CLI is built on, or anything it imports first) is named with
exit 3 rather than a traceback raised before gpuopt's own error handling exists. Imports nothing but
the standard library until then."""

from __future__ import annotations

import sys

# A missing package's error: one wording for this guard and the CLI's own (``cli/_output.py``).
MISSING_MESSAGE = "the Python package '{package}' that gpuopt needs is not installed ({exc})"
MISSING_EXPECTED = "pip install {package} (or reinstall gpuopt with its dependencies)"


def missing_package(exc: ModuleNotFoundError) -> str | None:
    """The top-level package an import failed on, unless it is gpuopt's own (a broken install's defect)."""
    package = (exc.name or "").partition(".")[0]
    return None if package in ("", "gpuopt") else package


def main(argv: list[str] | None = None) -> None:
    try:
        from gpuopt.cli import main as cli_main
    except ModuleNotFoundError as exc:
        package = missing_package(exc)
        if package is None:
            raise
        # No click, maybe no pydantic: no envelope can be built, so stderr alone (as the CLI does
        # without pydantic).
        sys.stderr.write(
            f"error[dependency_missing]: {MISSING_MESSAGE.format(package=package, exc=exc)}\n"
            f"  expected: {MISSING_EXPECTED.format(package=package)}\n"
        )
        sys.exit(3)
    cli_main(argv)
