"""The evaluation core: artifact store, Target freeze (readiness), workload driver protocol, supervised
invocations. Tools measure, freeze and record; they never choose what to try next.

Modules: :mod:`jsonio` (the strict reader and canonical hashing), :mod:`store` (one artifact root),
:mod:`driver` (the driver protocol), :mod:`readiness` (Target freeze), :mod:`invocation` (submit, status,
cancel), :mod:`supervisor` (the process that runs driver calls), :mod:`locks` (per-GPU locks).
"""
