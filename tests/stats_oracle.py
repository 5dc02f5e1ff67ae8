"""An independent Python implementation of ``gpuopt.rng/v1`` and of the resampling it drives.

Written from the documented definition (``rust/src/stats/rng.rs``), not from the Rust code's output, so
tests can check the engine bit for bit: stream keys (SHA-256 of the framed parts), SplitMix64 seeding,
xoshiro256++ outputs, Lemire's bounded integers, the balanced AB/BA schedule, and bootstrap replicates.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence

MASK = (1 << 64) - 1


def stream_key(tag: str, parts: Sequence[int | str]) -> int:
    message = b"gpuopt.rng/v1\0" + tag.encode()
    for part in parts:
        message += b"\0" + json.dumps(part, ensure_ascii=False, separators=(",", ":")).encode()
    return int.from_bytes(hashlib.sha256(message).digest()[:8], "big")


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & MASK


class Stream:
    """xoshiro256++ seeded by four SplitMix64 outputs of the key."""

    def __init__(self, key: int) -> None:
        state, seeds = key, []
        for _ in range(4):
            state = (state + 0x9E3779B97F4A7C15) & MASK
            z = state
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
            seeds.append(z ^ (z >> 31))
        self.s = seeds

    def next(self) -> int:
        s0, s1, s2, s3 = self.s
        result = (_rotl((s0 + s3) & MASK, 23) + s0) & MASK
        t = (s1 << 17) & MASK
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = _rotl(s3, 45)
        self.s = [s0, s1, s2, s3]
        return result

    def below(self, n: int) -> int:
        m = self.next() * n
        low = m & MASK
        if low < n:
            threshold = ((1 << 64) - n) % n
            while low < threshold:
                m = self.next() * n
                low = m & MASK
        return m >> 64


def schedule(pairs: int, seed: int) -> list[str]:
    stream = Stream(stream_key("schedule", [seed]))
    half = pairs // 2
    orders = ["AB"] * half + ["BA"] * half
    if pairs % 2:
        orders.append("AB" if stream.next() >> 63 == 0 else "BA")
    for i in range(pairs - 1, 0, -1):
        j = stream.below(i + 1)
        orders[i], orders[j] = orders[j], orders[i]
    return orders


def median(values: Sequence[float]) -> float:
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def mean(values: Sequence[float]) -> float:
    total = 0.0
    for v in values:
        total += v
    return (0.0 + 1.0 * total) / len(values)


def replicates(
    values: Sequence[float], estimator: str, seed: int, scope: str, metric: str, count: int
) -> list[float]:
    """Bootstrap replicate b draws n pairs from the stream ("bootstrap", seed, scope, metric, b)."""
    statistic = median if estimator == "median" else mean
    out = []
    n = len(values)
    for b in range(count):
        stream = Stream(stream_key("bootstrap", [seed, scope, metric, b]))
        out.append(statistic([values[stream.below(n)] for _ in range(n)]))
    return out


def type7(sorted_values: Sequence[float], q: float) -> float:
    h = (len(sorted_values) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    a, b = sorted_values[lo], sorted_values[hi]
    return a + (h - lo) * (b - a)


def percentile_interval(reps: Sequence[float], confidence: float) -> tuple[float, float]:
    s = sorted(reps)
    alpha = 1.0 - confidence
    return type7(s, alpha / 2.0), type7(s, 1.0 - alpha / 2.0)
