"""The entry point of the supervisor process (the operations layer: it picks the operation's handler and
hands it to the runner).

``python -m gpuopt.evaluation.detached detached ROOT INVOCATION`` detaches (double fork, new session, stdio
to ``supervisor.log``) and supervises a submitted invocation; ``... probe SPEC --caller-fd N`` runs a
readiness smoke tied to its caller by a pipe, so the caller's death cancels the call. The detached mode
forks away before importing the evaluation modules, so that the submitter, which waits for the first
process, does not wait for those imports.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def _detach(log_path: Path) -> None:
    """Second fork: the submitter reaps the first process, this one is re-parented and owns nothing."""
    if os.fork() > 0:
        os._exit(0)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.close(null)


def _detached(root: Path, inv_id: str) -> int:
    from gpuopt.evaluation import invocation  # after the fork (see the module docstring)

    return invocation.supervisor_for(root, inv_id).run()


def _probe(spec_path: Path, caller_fd: int) -> int:
    from gpuopt.evaluation import jsonio
    from gpuopt.evaluation.execution import ExecutionSpec, SmokeHandler
    from gpuopt.evaluation.supervisor import Supervisor

    spec = jsonio.load(ExecutionSpec, spec_path.read_bytes(), what="probe spec")
    os.set_blocking(caller_fd, False)
    supervisor = Supervisor(
        spec=spec,
        handler=SmokeHandler(),
        inv_dir=spec_path.parent,
        mode="probe",
        launch_deadline_epoch=None,
        tool_identity=None,
        caller_fd=caller_fd,
    )
    return supervisor.run()


def main(argv: list[str] | None = None) -> int:
    """Entry point; the detached mode forks away before any heavy import."""
    parser = argparse.ArgumentParser(prog="gpuopt-supervisor")
    sub = parser.add_subparsers(dest="mode", required=True)
    det = sub.add_parser("detached")
    det.add_argument("root")
    det.add_argument("invocation")
    probe = sub.add_parser("probe")
    probe.add_argument("spec")
    probe.add_argument("--caller-fd", type=int, required=True)
    args = parser.parse_args(argv)
    if args.mode == "detached":
        if not args.invocation.startswith("inv-") or "/" in args.invocation or ".." in args.invocation:
            return 2
        _detach(Path(args.root) / "invocations" / args.invocation / "supervisor.log")
        return _detached(Path(args.root), args.invocation)
    return _probe(Path(args.spec), args.caller_fd)


if __name__ == "__main__":
    sys.exit(main())
