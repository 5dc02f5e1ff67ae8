"""gpuopt: an evidence toolkit for GPU workload optimization.

Tools measure, parse and record; they never choose the direction. See ``gpuopt --help``.

Importing ``gpuopt`` loads nothing else: the native module and the installed version are looked up on
first use of ``gpuopt.__version__`` (``gpuopt --help`` needs neither).
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def _checked_version() -> str:
    """The installed version, after checking the native module was built from the same version."""
    from importlib.metadata import PackageNotFoundError, version

    from gpuopt import _native

    try:
        installed = version("gpuopt")
    except PackageNotFoundError:  # running from a source tree that was never installed
        installed = _native.__version__
    if installed != _native.__version__:
        raise ImportError(
            f"gpuopt {installed} found native module {_native.__version__}; reinstall gpuopt (pip install .)"
        )
    return installed


def __getattr__(name: str) -> str:
    if name == "__version__":
        return _checked_version()
    raise AttributeError(f"module 'gpuopt' has no attribute {name!r}")


__all__ = ["__version__"]
