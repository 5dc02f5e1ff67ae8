"""Read-only views of an artifact root: ``ls``, ``show``, ``report`` and the ``handoff`` draft.

Views are never evidence and change nothing: they read the ledger, open only the records they show and
verify each against its ledger hash. (They live outside the modules whose hash is gpuopt's tool identity,
since they do not affect what is measured or how it is judged.)
"""
