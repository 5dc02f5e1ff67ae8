"""A foreign CPU burner for the sampler tests: ``burner.py FLAG always|flag`` busy-loops forever
(``always``) or only while the file FLAG exists (``flag``), polling it every 5 ms otherwise."""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    flag, mode = sys.argv[1], sys.argv[2]
    while True:
        if mode == "always" or os.path.exists(flag):
            until = time.monotonic() + 0.01
            while time.monotonic() < until:
                pass
        else:
            time.sleep(0.005)


if __name__ == "__main__":
    main()
