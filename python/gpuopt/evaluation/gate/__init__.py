"""The regression gate for CI (``gpuopt gate``): saved baselines (:mod:`.baselines`, :mod:`.store`,
:mod:`.bundle`), the ``gate`` invocation (:mod:`.operation`, :mod:`.handler`, :mod:`.unpaired`), the rule
(:mod:`.judge`), capture gates (:mod:`.captures`), the check (:mod:`.check`) and its outputs
(:mod:`.outputs`). See ``references/gate.md``."""
