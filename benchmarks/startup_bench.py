"""Start-up: ``gpuopt --help``, ``gpuopt AREA --help`` and ``gpuopt --version`` against ``python -c
"import click"`` in the same run.

Each command runs as its own process (the installed ``gpuopt`` console script beside this Python),
interleaved round by round so all see the same machine load; the median wall time of each is kept.
Goal (issue 16): each <= 150 ms and <= 2x the click import.

    python benchmarks/startup_bench.py [--rounds 21]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _commands() -> dict[str, list[str]]:
    script = Path(sys.executable).with_name("gpuopt")
    gpuopt = [str(script)] if script.exists() else [sys.executable, "-m", "gpuopt"]
    return {
        'python -c "import click"': [sys.executable, "-c", "import click"],
        "gpuopt --help": [*gpuopt, "--help"],
        "gpuopt --version": [*gpuopt, "--version"],
        "gpuopt nsys --help": [*gpuopt, "nsys", "--help"],
        "gpuopt torch --help": [*gpuopt, "torch", "--help"],
        "gpuopt ncu --help": [*gpuopt, "ncu", "--help"],
        "gpuopt nsys stats --help": [*gpuopt, "nsys", "stats", "--help"],
    }


def _wall_ms(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    commands = _commands()
    times: dict[str, list[float]] = {name: [] for name in commands}
    for argv in commands.values():  # warm the page cache and .pyc files once
        _wall_ms(argv)
    for _ in range(args.rounds):
        for name, argv in commands.items():
            times[name].append(_wall_ms(argv))
    click_ms = statistics.median(times['python -c "import click"'])
    print(f"{'command':28} {'median ms':>10} {'min ms':>8} {'x click':>8}  goal <= 150 ms and <= 2.0x")
    for name, samples in times.items():
        median = statistics.median(samples)
        ok = (
            ""
            if name.startswith("python")
            else ("ok" if median <= 150 and median <= 2 * click_ms else "MISS")
        )
        print(f"{name:28} {median:10.1f} {min(samples):8.1f} {median / click_ms:8.2f}  {ok}")


if __name__ == "__main__":
    main()
