"""Opens an HTML report in headless Chromium (the Debian ``chromium`` package, or Chrome) and reads back
what it rendered: the page's own render status (``<body data-render-status>``), each plot div's count of
SVG/canvas layers and drawn traces, and every console message Chromium logged (``--enable-logging``).
Used by the HTML report tests and by ``benchmarks/html_bench.py``."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = [
    "--headless",
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--no-first-run",
    "--disable-dev-shm-usage",
    # Lets the page's timers (the status script) run before the DOM is dumped.
    "--virtual-time-budget=10000",
]


def find() -> str | None:
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Rendered:
    status: str
    plots: dict[str, tuple[int, int]]  # data-name -> (SVG/canvas layers, drawn traces)
    empty_sections: list[str]
    console: list[str]
    seconds: float
    dom: str


def _attribute(tag: str, name: str) -> str | None:
    found = re.search(rf'\b{name}="([^"]*)"', tag)
    return None if found is None else found.group(1)


def render(page: Path, *, screenshot: Path | None = None, timeout_s: float = 180) -> Rendered:
    """Dumps the rendered DOM (and, with ``screenshot``, a second run saves a PNG of the page)."""
    binary = find()
    assert binary is not None, "no Chromium on PATH"
    url = page.resolve().as_uri()
    started = time.monotonic()
    done = subprocess.run(
        [binary, *FLAGS, "--enable-logging=stderr", "--v=0", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    body = re.search(r"<body[^>]*>", dom)
    status = (_attribute(body.group(0), "data-render-status") if body else None) or "no status"
    plots: dict[str, tuple[int, int]] = {}
    for tag in re.findall(r"<div[^>]*class=\"gpuopt-plot\"[^>]*>", dom):
        name, rendered = _attribute(tag, "data-name"), _attribute(tag, "data-rendered") or "0:0"
        layers, traces = (int(x) for x in rendered.split(":"))
        plots[name or "?"] = (layers, traces)
    empty = re.findall(r"<div class=\"empty\" id=\"plot-([\w-]+)\"", dom)
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    if screenshot is not None:
        shot = subprocess.run(
            [
                binary,
                *FLAGS,
                "--hide-scrollbars",
                "--window-size=1280,1500",
                f"--screenshot={screenshot}",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
        assert shot.returncode == 0 and screenshot.is_file(), shot.stderr[-2000:]
    return Rendered(
        status=status, plots=plots, empty_sections=empty, console=console, seconds=seconds, dom=dom
    )
