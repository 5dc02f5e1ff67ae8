"""gpuopt: an evidence toolkit for GPU workload optimization.

Tools measure, parse and record; they never choose the direction. See ``gpuopt --help``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from gpuopt import _native

try:
    __version__ = version("gpuopt")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = _native.__version__

if __version__ != _native.__version__:
    raise ImportError(
        f"gpuopt {__version__} found native module {_native.__version__}; reinstall gpuopt (pip install .)"
    )

__all__ = ["__version__"]
