"""From an executed plan to a result: :mod:`pairs` (the context, pairs and their values), :mod:`statistics`
(through the engine, :mod:`gpuopt.stats`), :mod:`verdicts` (the outcome matrix, spec §6.5, §6.8) and
:mod:`handlers` (one per operation, named by the operations registry).

Correctness first: a correctness (or contract, identity, binding) failure leaves the measurement invalid,
and its performance samples are kept but never interpreted (``statistics: null``).
"""
