"""``gpuopt readiness check``: freeze a Target and prove its driver works before anything is published.

Validate → probe the storage of the root's parent → in a private work area freeze the original, the test
set and the accuracy reference → observe the runtime (GPUs by UUID, driver, tools) → normalize and hash the
driver → a 2-sample smoke call through a probe supervisor tied to this process → the driver gates, the
correctness rule and the identity cross-check → ``target.json`` and the first ledger line → a no-replace
rename of the work root onto the root. On any failure nothing exists at the root and the attempt (request,
observed identity, smoke call folder with capped output, ``error.json``) is kept for debugging.
"""

from __future__ import annotations

from gpuopt.evaluation.readiness.freeze import check, plan
from gpuopt.evaluation.readiness.validate import DEFAULT_RULES, parse_request, validate

__all__ = ["DEFAULT_RULES", "check", "parse_request", "plan", "validate"]
