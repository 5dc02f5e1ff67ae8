"""gpuopt: an evidence toolkit for GPU workload optimization.

Tools measure, parse and record; they never choose the direction. See ``gpuopt --help``.

Importing ``gpuopt`` loads nothing else: the native module and the installed version are looked up on
first use of ``gpuopt.__version__`` (``gpuopt --help`` needs neither).
"""

from __future__ import annotations

from functools import lru_cache


def _installed_version() -> str | None:
    """The version in the name of the first ``gpuopt-VERSION.dist-info`` folder on ``sys.path``.

    This is the distribution ``importlib.metadata.version`` finds first, read without importing
    ``importlib.metadata`` (its email, zipfile and csv imports cost about 50-140 ms per process, most of
    a small command's run). ``None`` when gpuopt was never installed (a bare source tree).
    """
    import os
    import sys

    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as folder:
                for item in folder:
                    name = item.name
                    if name.startswith("gpuopt-") and name.endswith(".dist-info"):
                        return name[len("gpuopt-") : -len(".dist-info")]
        except OSError:  # a zip file, a missing folder, no permission
            continue
    return None


@lru_cache(maxsize=1)
def _checked_version() -> str:
    """The installed version, after checking the native module was built from the same version."""
    from gpuopt import _native

    installed = _installed_version() or _native.__version__
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
