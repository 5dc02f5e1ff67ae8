"""One self-contained HTML page: a header of facts, then sections that each hold a plotly figure, a
table, or a sentence saying why there is nothing to draw. plotly.js is inlined once, so the file opens
offline; a small script records the page's own render status (``<body data-render-status>``: ``ok`` or
the first script error) for the browser test and for anyone who wonders whether a plot failed."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuopt.errors import AbsentError, InputError
from gpuopt.models.html import HtmlPlot, HtmlReportData

INSTALL_HINT = "pip install 'gpuopt[html]'"

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1280px;
padding:16px 24px;color:#1d2228}
h1{font-size:22px;margin:8px 0}h2{font-size:17px;margin:28px 0 4px}
.facts{margin:4px 0 12px;padding:0;list-style:none;color:#444}.facts li{margin:1px 0}
.note{color:#555;font-size:13px;margin:2px 0 6px}.empty{padding:18px;background:#f6f7f9;color:#333;
border:1px dashed #bbb}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}
"""

# Registered before plotly.js runs: any script error or console.error lands in the status.
_ERRORS = """
window.gpuoptErrors=[];
window.addEventListener('error',function(e){window.gpuoptErrors.push(String(e.message||e));});
(function(){var f=console.error;console.error=function(){
window.gpuoptErrors.push(Array.prototype.join.call(arguments,' '));f.apply(console,arguments);};})();
"""

# After every plot (plotly draws SVG synchronously in newPlot): each plot div says how many SVG/canvas
# layers and drawn traces it holds, the body the overall status and the ms from navigation start.
STATUS_SCRIPT = """
window.addEventListener('load',function(){
var divs=document.querySelectorAll('.gpuopt-plot');var bad=0;
divs.forEach(function(d){var n=d.querySelectorAll('svg.main-svg, canvas').length;
var t=d.querySelectorAll('g.trace, g.barlayer path, g.hm image, g.imagelayer image').length;
d.setAttribute('data-rendered',n+':'+t);if(n===0||t===0){bad++;}});
var errs=window.gpuoptErrors||[];document.body.setAttribute('data-render-status',
errs.length?('error: '+errs[0]):(bad?('empty plots: '+bad):'ok'));
document.body.setAttribute('data-render-ms',String(Math.round(performance.now())));});
"""


def ms(ns: object) -> str:
    """A duration in ns as people read it on a page (``1.234 ms``); ``n/a`` for a missing value."""
    return f"{float(ns) / 1e6:,.3f} ms" if isinstance(ns, int | float) else "n/a"


def plotly() -> Any:
    """``plotly.graph_objects``, or exit 3 naming the extra that installs it."""
    try:
        import plotly.graph_objects as go
    except ImportError as exc:
        raise AbsentError(
            "tool_absent",
            f"HTML reports need the Python package 'plotly' ({exc.name} is not installed)",
            expected=INSTALL_HINT,
        ) from exc
    return go


def prepare(out: Path) -> None:
    """Fails before any parsing: plotly absent (exit 3), ``out`` a folder or in a missing one (exit 2)."""
    plotly()
    if out.is_dir():
        raise InputError(
            "output_is_folder", f"--html {out} is a folder", path=str(out), expected="a file path"
        )
    from gpuopt._files import check_output

    check_output(out)


@dataclass
class Page:
    """A report page being built; :meth:`write` checks the destination and writes one file."""

    title: str
    facts: list[str] = field(default_factory=list)
    plots: list[HtmlPlot] = field(default_factory=list)
    _blocks: list[str] = field(default_factory=list)

    def _section(self, name: str, title: str, note: str | None) -> None:
        self._blocks.append(f"<h2 id='{name}'>{html.escape(title)}</h2>")
        if note:
            self._blocks.append(f"<p class='note'>{html.escape(note)}</p>")

    def figure(self, name: str, title: str, fig: Any, note: str | None = None) -> None:
        import plotly.io as pio

        self._section(name, title, note)
        div = pio.to_html(
            fig,
            full_html=False,
            include_plotlyjs=False,
            div_id=f"plot-{name}",
            config={"displaylogo": False, "displayModeBar": False, "responsive": True},
        )
        self._blocks.append(f"<div class='gpuopt-plot' data-name='{name}'>{div}</div>")
        self.plots.append(HtmlPlot(name=name, title=title, drawn=True, note=note))

    def nothing(self, name: str, title: str, why: str) -> None:
        """A section with nothing to draw: the page says why instead of showing an empty plot."""
        self._section(name, title, None)
        self._blocks.append(f"<div class='empty' id='plot-{name}'>{html.escape(why)}</div>")
        self.plots.append(HtmlPlot(name=name, title=title, drawn=False, note=why))

    def raw(self, title: str, fragment: str) -> None:
        """A section of HTML made elsewhere (already escaped), e.g. the report's own tables."""
        self._blocks.append(f"<h2>{html.escape(title)}</h2><div class='tables'>{fragment}</div>")

    def render(self) -> str:
        from plotly.offline import get_plotlyjs

        facts = "".join(f"<li>{html.escape(f)}</li>" for f in self.facts)
        return (
            "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(self.title)}</title><style>{_STYLE}</style>"
            f"<script>{_ERRORS}</script><script>{get_plotlyjs()}</script></head>\n"
            f"<body data-render-status='pending'><h1>{html.escape(self.title)}</h1>"
            f"<ul class='facts'>{facts}</ul>\n"
            + "\n".join(self._blocks)
            + f"\n<script>{STATUS_SCRIPT}</script>"
            "\n</body></html>\n"
        )

    def write(self, out: Path) -> HtmlReportData:
        from gpuopt._files import write_output

        prepare(out)
        write_output(out, self.render().encode("utf-8"))
        return HtmlReportData(
            path=str(out), size_bytes=out.stat().st_size, title=self.title, plots=self.plots
        )
