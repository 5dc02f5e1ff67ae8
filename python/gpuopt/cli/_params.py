"""Click parameter types shared by commands.

``click.FloatRange`` lets ``nan`` through (every comparison with NaN is false) and ``inf`` through an
open-ended range; both then failed deep inside a model as an internal error. :class:`FiniteFloatRange`
answers them as a usage error (exit 2) like any other out-of-range value.
"""

from __future__ import annotations

import math
from typing import Any

import click


class FiniteFloatRange(click.FloatRange):
    """A ``FloatRange`` that also rejects NaN and ±infinity."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{rv} is not a finite number.", param, ctx)
        return rv
