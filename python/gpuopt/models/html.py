"""Data of the HTML reports (``gpuopt nsys report``, ``gpuopt torch report``): where the page went
and what it shows. The page itself is a view for people, never evidence."""

from __future__ import annotations

from pydantic import Field

from gpuopt.models._base import Model


class HtmlPlot(Model):
    """One section of the page: a plot drawn, or the reason it is not."""

    name: str = Field(description="Stable id of the section (its div is plot-<name>)")
    title: str = Field(description="The section's heading on the page")
    drawn: bool = Field(description="False when the input has nothing to draw; note says why")
    note: str | None = Field(default=None, description="What the plot shows or why nothing is drawn")


class HtmlReportData(Model):
    """``gpuopt nsys report`` / ``gpuopt torch report``: one self-contained HTML file."""

    path: str = Field(description="The HTML file written")
    size_bytes: int = Field(
        description="Size of the HTML file written (bytes); the page is self-contained (data and scripts "
        "inline)"
    )
    title: str = Field(description="The page's title: the report kind and the input file's name")
    plots: list[HtmlPlot] = Field(
        description="Every section of the page in page order: drawn, or the reason it is not"
    )
