"""Shared test setup: where the real fixtures live, and a CLI runner that goes through ``main``."""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import pty
import shutil
import subprocess
import sys
import tempfile
import traceback
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from fixture_data import unpacked

ROOT = Path(__file__).resolve().parent.parent

# pytest keeps its rewritten test modules in `__pycache__` even where PYTHONDONTWRITEBYTECODE is set
# (every test worker rewrites every module at collection otherwise: about 3 s each).
sys.dont_write_bytecode = False

# Tests (and the CLI processes they start) never touch the user's identity cache.
os.environ["GPUOPT_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpuopt-test-cache-")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules marked ``starts_first`` go first (the sort is stable: each module keeps its order), so
    that pytest-xdist hands the long ones out before the short ones and the workers end together."""
    items.sort(key=lambda item: item.get_closest_marker("starts_first") is None)


@pytest.fixture(scope="session")
def shared() -> Path:
    """The real fixtures (a copy of ``../shared/fixtures`` kept in ``tests/data``; see its README)."""
    return unpacked()


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def gpuopt(*args: str, cwd: Path | None = None) -> Run:
    """Runs ``gpuopt ARGS`` through the console entry ``main``, as a user or agent would, in this
    process: what it writes to stdout and stderr is captured, its exit status returned. The
    interpreter start and imports a child would pay (~0.5 s a call, most of the suite's time) are
    shared; the working directory, the environment and the warning filters are restored afterwards.
    Tests of what only a separate process shows (signals, start-up imports, stdin, descriptors) use
    :func:`gpuopt_process`. ``GPUOPT_TEST_PROCESS=1`` sends every call through a child instead."""
    if os.environ.get("GPUOPT_TEST_PROCESS") == "1":
        return gpuopt_process(*args, cwd=cwd)
    from gpuopt.cli import main

    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="backslashreplace", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True)
    environ = dict(os.environ)
    here = os.getcwd()

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, *_: Any) -> None:
        stderr.write(warnings.formatwarning(message, category, filename, lineno))

    formatwarning = warnings.formatwarning
    code: int = 0
    try:
        if cwd is not None:
            os.chdir(cwd)
        with (
            contextlib.redirect_stdout(stdout),
            contextlib.redirect_stderr(stderr),
            _stdin_empty(),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("default")
            warnings.showwarning = show
            try:
                main(list(args))
            except SystemExit as exc:
                code = _exit_status(exc.code, stderr)
            except Exception:
                traceback.print_exc(file=stderr)
                code = 1
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(environ)
        warnings.formatwarning = formatwarning
    stdout.flush()
    stderr.flush()
    return Run(code, _text(out), _text(err))


@contextlib.contextmanager
def _stdin_empty() -> Any:
    """Standard input at end of file, as a child given no input sees it."""
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
    try:
        yield
    finally:
        sys.stdin = saved


def _exit_status(code: object, stderr: io.TextIOWrapper) -> int:
    """The status a process would exit with for ``sys.exit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=stderr)
    return 1


def _text(raw: io.BytesIO) -> str:
    """Bytes written, read back as ``subprocess.run(text=True)`` would (universal newlines)."""
    return raw.getvalue().decode("utf-8", errors="replace").replace("\r\n", "\n")


def gpuopt_in_terminal(*args: str) -> tuple[int, str]:
    """Runs gpuopt with stdin, stdout and stderr on a pseudo-terminal, as a person would."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuopt", *args], stdin=follower, stdout=follower, stderr=follower
    )
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    return proc.wait(), out.decode("utf-8", errors="replace")


def gpuopt_process(*args: str, cwd: Path | None = None) -> Run:
    """Runs the installed ``gpuopt`` console entry in a child process."""
    done = subprocess.run(
        [sys.executable, "-m", "gpuopt", *args], capture_output=True, text=True, cwd=cwd, check=False
    )
    return Run(done.returncode, done.stdout, done.stderr)


@dataclass(frozen=True)
class Example:
    """``gpuopt example run``'s result: the folder it made and the run (stdout, stderr, code)."""

    folder: Path
    run: Run


@pytest.fixture(scope="session")
def example_made_once(tmp_path_factory: pytest.TempPathFactory) -> Example:
    """``gpuopt example run`` once per test run (~30 s of real driver calls and sampling): the tests
    that need an example root take a private copy of it (:func:`copy_of_example`). Under pytest-xdist
    every worker's temporary folder sits in one folder of the run: the first worker to take the lock
    there makes the example, the others wait for it and read its saved result."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    folder, saved = base / "example-made-once", base / "example-made-once.json"
    with open(base / "example-made-once.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if saved.is_file():
            run = Run(**json.loads(saved.read_text()))
        else:
            folder.mkdir()
            run = gpuopt("example", "run", str(folder / "demo"), "--json")
            saved.write_text(json.dumps(asdict(run)))
    assert run.code == 0, run.stderr[-3000:]
    return Example(folder / "demo", run)


def copy_of_example(made: Example, to: Path) -> Path:
    """A private copy of the example's folder (``project``, ``requests``, ``root``; records keep their
    0444 mode) at ``to``. Its records name the original's project paths, which stay in place and are
    only read."""
    shutil.copytree(made.folder, to, symlinks=True)
    return to
