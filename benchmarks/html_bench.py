"""Size and render time of the HTML report of a 1 M-kernel nsys export, against plotly drawing every kernel.

Synthesizes (once) an export with ``tests/nsys_db.py``: ``--kernels`` kernels (default 1,000,000) on 2
GPUs x 4 streams, 200 kernel names, durations 2-40 us with 0.5-20 us gaps (deterministic). Then:

* gpuopt: ``gpuopt nsys report FILE --html OUT`` (wall time of the whole command), the file's size, and
  headless Chromium's wall time to load it and finish drawing (``--dump-dom`` after the page's status
  script ran; the page must say ``ok``), pinned to 2 cores with ``taskset -c 0,1``;
* plotly-every-kernel (the peer: what a person gets from plotly without gpuopt's rule): one horizontal
  Bar per kernel, as gpuopt draws exports of <= 5,000 operations, written by plotly's own
  ``fig.write_html(include_plotlyjs=True)``; its build time, size and Chromium time under the same
  pinning, with a time limit (``--render-limit-s``): past it the render is reported as not finished.
* chromium-blank: Chromium's wall time on an empty page (its start-up), beside the whole-process times.

Goals (issue 19): the HTML of a 1 M-kernel export <= 10 MB and rendered in <= 3 s by headless Chromium
on 2 cores. Usage: ``python benchmarks/html_bench.py [--kernels 1000000] [--workdir /tmp/gpuopt-html]``.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import browser  # noqa: E402
from gpuopt.html.page import STATUS_SCRIPT  # noqa: E402
from nsys_db import GLOBAL_PID, Export  # noqa: E402

GOAL_MB, GOAL_S = 10.0, 3.0


def synthesize(path: Path, kernels: int) -> Path:
    if path.is_file():
        return path
    rng = random.Random(19)
    export = Export()
    names = [export.string(f"void kernel_{i:03d}<float, {i % 7}>(Params)") for i in range(200)]
    lanes = [(device, stream) for device in (0, 1) for stream in (7, 8, 9, 10)]
    clock = dict.fromkeys(lanes, 1_000_000)
    for i in range(kernels):
        lane = lanes[i % len(lanes)]
        start = clock[lane] + rng.randint(500, 20_000)
        end = start + rng.randint(2_000, 40_000)
        clock[lane] = end
        name = names[rng.randrange(len(names))]
        export.kernels.append((start, end, lane[0], 1, lane[1], i + 1, GLOBAL_PID, name, name, None))
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    export.write(partial)
    partial.replace(path)
    return path


def chromium(page: Path, limit_s: float) -> tuple[float | None, float | None, str]:
    """Chromium on 2 cores: wall seconds of the whole process, seconds from navigation start until every
    plot was drawn (the page's ``data-render-ms``), and the page's status."""
    binary = browser.find()
    assert binary is not None, "html_bench needs chromium on PATH"
    pin = ["taskset", "-c", "0,1"] if shutil.which("taskset") else []
    flags = [f for f in browser.FLAGS if not f.startswith("--virtual-time-budget")]  # real clocks
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [*pin, binary, *flags, "--dump-dom", page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=limit_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, None, f"not finished in {limit_s:.0f} s"
    wall = time.perf_counter() - started
    body = re.search(r"<body[^>]*>", done.stdout)
    tag = body.group(0) if body else ""
    status = re.search(r'data-render-status="([^"]*)"', tag)
    ms = re.search(r'data-render-ms="(\d+)"', tag)
    return wall, None if ms is None else int(ms.group(1)) / 1000, status.group(1) if status else "no status"


def peer_page(export: Path, out: Path) -> float:
    """plotly alone: every kernel one bar (what gpuopt does below 5,000 operations)."""
    import plotly.graph_objects as go

    from gpuopt import nsys

    ops = nsys.open(export).operations()
    started = time.perf_counter()
    t0 = ops["start_ns"].min()
    lane = [f"GPU {d} · stream {s}" for d, s in zip(ops["device_id"], ops["stream_id"], strict=True)]
    fig = go.Figure(
        go.Bar(
            orientation="h",
            y=lane,
            x=(ops["duration_ns"] / 1e6).to_numpy(),
            base=((ops["start_ns"] - t0) / 1e6).to_numpy(),
            hovertext=ops["name"].to_list(),
        )
    )
    fig.write_html(out, include_plotlyjs=True)
    seconds = time.perf_counter() - started
    # The same status script as gpuopt's pages, so both are timed alike (after the measured build).
    text = out.read_text(encoding="utf-8")
    out.write_text(text.replace("</body>", f"<script>{STATUS_SCRIPT}</script></body>"), encoding="utf-8")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/gpuopt-html-bench"))
    parser.add_argument("--render-limit-s", type=float, default=300.0)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    export = synthesize(args.workdir / f"kernels-{args.kernels}.sqlite", args.kernels)
    print(f"export: {export} ({export.stat().st_size / 1e6:.0f} MB, {args.kernels:,} kernels)", flush=True)

    blank = args.workdir / "blank.html"
    blank.write_text("<!doctype html><html><body data-render-status='ok'></body></html>\n")
    floor, _, _ = chromium(blank, args.render_limit_s)

    ours = args.workdir / "gpuopt.html"
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "gpuopt", "nsys", "report", str(export), "--html", str(ours)],
        check=True,
        capture_output=True,
    )
    ours_build = time.perf_counter() - started
    ours_wall, ours_render, ours_status = chromium(ours, args.render_limit_s)

    peer = args.workdir / "plotly-every-kernel.html"
    peer_build = peer_page(export, peer)
    peer_wall, peer_render, peer_status = chromium(peer, args.render_limit_s)

    def row(
        name: str, build: float, page: Path, wall: float | None, render: float | None, status: str
    ) -> str:
        size = page.stat().st_size / 1e6
        drawn = "—" if render is None else f"{render:.2f} s"
        whole = "—" if wall is None else f"{wall:.2f} s"
        return f"{name:20} {build:8.1f} s {size:8.1f} MB {drawn:>12} {whole:>12}  ({status})"

    print(f"{'':20} {'build':>10} {'file':>11} {'drawn after':>12} {'chromium':>12}")
    print(row("gpuopt nsys report", ours_build, ours, ours_wall, ours_render, ours_status))
    print(row("plotly-every-kernel", peer_build, peer, peer_wall, peer_render, peer_status))
    print(f"{'chromium-blank':20} {'':>10} {'':>11} {'':>12} {floor or 0:11.2f} s  (start-up floor)")
    size_mb = ours.stat().st_size / 1e6
    print(
        f"goal: file <= {GOAL_MB:g} MB: {'met' if size_mb <= GOAL_MB else 'MISSED'} ({size_mb:.1f} MB); "
        f"drawn <= {GOAL_S:g} s on 2 cores: "
        + ("not measured" if ours_render is None else ("met" if ours_render <= GOAL_S else "MISSED"))
    )
    if peer_render is not None and ours_render is not None:
        smaller = peer.stat().st_size / ours.stat().st_size
        print(
            f"gpuopt's page is drawn {peer_render / ours_render:.1f}x sooner, "
            f"from a {smaller:.0f}x smaller file"
        )


if __name__ == "__main__":
    main()
