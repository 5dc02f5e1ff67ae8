"""Helpers behind :mod:`gpuopt.nsys`: :mod:`report` (an opened export, :class:`report.Report`, and its
facts as tables and documents) and :mod:`export` (a ``.nsys-rep`` exported to SQLite with ``nsys``, into
gpuopt's cache). :mod:`gpuopt.nsys` is the public face: it re-exports both and adds the documents the
commands print."""
