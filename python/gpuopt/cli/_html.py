"""The ``--html OUT`` option the report commands share, and the line they print after writing."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gpuopt.cli._params import output_path

if TYPE_CHECKING:
    from gpuopt.models.html import HtmlReportData

F = TypeVar("F", bound=Callable[..., Any])


def html_option(*, required: bool) -> Callable[[F], F]:
    return click.option(
        "--html",
        "html_out",
        required=required,
        metavar="OUT",
        type=output_path(dir_okay=True),
        help="Write one self-contained HTML file of plots here (opens offline; needs pip install "
        "'gpuopt[html]').",
    )


def render_html(data: HtmlReportData) -> str:
    lines = [f"HTML report written to {data.path} ({data.size_bytes / 1e6:.1f} MB)"]
    for plot in data.plots:
        lines.append(f"  {plot.title}: " + ("drawn" if plot.drawn else f"nothing to draw — {plot.note}"))
    return "\n".join(lines)
