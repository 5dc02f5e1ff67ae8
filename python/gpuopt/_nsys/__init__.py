"""Helpers behind :mod:`gpuopt.nsys`: :mod:`export` (a ``.nsys-rep`` exported to SQLite with ``nsys``, into
gpuopt's cache) and :mod:`stats` (``nsys stats`` printed by the engine: CSV, and the ``--json`` envelope
without polars or pydantic)."""
