"""How an effect reads to a person: a percent, and past 2x either way the factor beside it.

``+5483.70 %`` is hard to read next to ``-98 % time``; ``+5483.70 % (55.84x better)`` is not. One rule for
the CLI's own blocks and the evaluation views (report, hand-off), so both say the same.
"""

from __future__ import annotations


def ratio_note(improvement_pct: float | None, *, threshold: float = 2.0) -> str:
    """A log-ratio effect of ``improvement_pct`` % as a factor, when a factor reads better than a percent.

    ``+106130 %`` is the candidate ``1,062x`` better (the ratio is ``1 + pct/100``); shown from
    ``threshold``x either way, else empty.
    """
    if improvement_pct is None:
        return ""
    ratio = 1.0 + improvement_pct / 100.0
    if ratio >= threshold:
        return f" ({ratio:,.{0 if ratio >= 100 else 2}f}x better)"
    if 0.0 < ratio <= 1.0 / threshold:
        inverse = 1.0 / ratio
        return f" ({inverse:,.{0 if inverse >= 100 else 2}f}x worse)"
    return ""


def effect(improvement_pct: float | None) -> str:
    """``+12.34 %``, with the factor past 2x (``+5483.70 % (55.84x better)``); an em dash for none."""
    if improvement_pct is None:
        return "—"
    return f"{improvement_pct:+.2f} %{ratio_note(improvement_pct)}"
