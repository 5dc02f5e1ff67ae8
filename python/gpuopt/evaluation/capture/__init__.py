"""``gpuopt capture``: profiles captured through the frozen Target's driver (:mod:`operations`), the worker
that runs each call under the profiler and freezes its report (:mod:`worker`), the profilers themselves
(:mod:`profilers`) and capture records as ``gpuopt profile diff`` inputs (:mod:`refs`)."""
