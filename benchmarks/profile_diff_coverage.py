"""Do `gpuopt profile diff`'s intervals and flags cover what they claim at the k people use?

Pools of repeated real captures of one unchanged workload (A/A): every pool under
``tests/data/fixtures/gpuopt/h200`` whose captures were made by separate processes of the same code
(the softmax original_a + original_b captures, nsys and torch; the decode eager captures where present).
For k = 2, 3, 4, 5, 8 captures a side, paired and unpaired, two sources:

* **real splits**: the pool's captures in the order they were made, in rounds of two neighbours (softmax:
  original_a_i and original_b_i, made in one round; decode: captures 2i-1 and 2i), as a person runs an
  A/A interleaved; a split takes k rounds and gives one capture of each to each side, at random (paired:
  the two of a round form a pair). Every such split while the pool has k rounds, else none;
* **simulation calibrated on the pool**: per key its mean and its per-capture spread, split into a factor
  shared by every key of a capture (clock state, contention) and each key's own noise (Student t with 4
  degrees of freedom: heavier tails than the real data), so any k can be drawn.

Each diff goes through the engine `gpuopt profile diff` uses (`rust/src/profile/diff.rs` via
`gpuopt.profile`). Printed per line: diffs run, keys tested per diff, the share of A/A keys whose
interval excludes 0 (**target ≤ 5 %**), the share of diffs that flag anything (**≤ the declared FDR,
5 %**: under A/A any flag is false), the same with ``--min-effect 1`` (a change under 1 % never
flagged), the marginal miss rate of a single 95 % t interval (coverage of the
test itself, 5 % when honest), and for comparison the miss rate of the percentile bootstrap over captures
that gpuopt used before (95 %, 2,000 resamples, unadjusted). Simulation lines add the power: the share of
keys flagged when each key's candidate mean is moved by twice its own per-capture spread.

    python benchmarks/profile_diff_coverage.py [--splits 200] [--sims 400] [--seed 7]
"""

from __future__ import annotations

import argparse
import itertools
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fixture_data import unpacked  # noqa: E402

FDR = 0.05
KS = (2, 3, 4, 5, 8)


@dataclass
class Pool:
    name: str
    keys: list[str]
    values: np.ndarray  # keys x captures, total ns, captures in the order they were made

    @property
    def rounds(self) -> int:
        return self.values.shape[1] // 2


def _pool(name: str, paths: list[Path]) -> Pool | None:
    """``paths`` in the order the captures were made."""
    from gpuopt._profile_sources import load

    if len(paths) < 4:
        return None
    tables = [load(p, "kernel").table for p in paths]
    long = pl.concat([t.with_columns(capture=pl.lit(i)) for i, t in enumerate(tables)])
    wide = long.pivot(on="capture", index="key", values="total_ns").fill_null(0.0).sort("key")
    values = wide.drop("key").to_numpy().astype(float)
    return Pool(name, wide["key"].to_list(), values)


def pools(data: Path) -> list[Pool]:
    h200 = data / "gpuopt" / "h200"
    out = []
    for kind, suffix in (("nsys", "sqlite"), ("torch", "json.gz")):
        folder = h200 / "softmax" / kind
        same = [folder / f"sm_original_{s}_{i}.{suffix}" for i in range(1, 6) for s in "ab"]
        out.append(_pool(f"softmax {kind} (A/A, {len(same)})", same))
        # tests/data/recipes/capA.sh: en_i.sqlite / et_i.json.gz, i in the order they were made.
        found = (h200 / "decode_k").glob(f"e{kind[0]}_*.{suffix}")
        eager = sorted(found, key=lambda p: int(p.name.split("_")[1].split(".")[0]))
        out.append(_pool(f"decode eager {kind} (A/A, {len(eager)})", eager))
    return [p for p in out if p is not None]


def engine(
    keys: list[str], b: np.ndarray, c: np.ndarray, paired: bool, family: str, min_effect: float = 0.0
) -> pl.DataFrame:
    from gpuopt.profile import _native_rows, _Opts

    opts = _Opts(paired=paired, fdr=FDR, min_effect=min_effect)
    return _native_rows(keys, pl.DataFrame(b), pl.DataFrame(c), opts, family)


def excludes(frame: pl.DataFrame) -> np.ndarray:
    low, high = frame["ci_low_ns"].to_numpy(), frame["ci_high_ns"].to_numpy()
    return (low > 0) | (high < 0)


def bootstrap_misses(b: np.ndarray, c: np.ndarray, paired: bool, rng: np.random.Generator) -> int:
    """The percentile bootstrap over captures gpuopt used before: 95 %, 2,000 resamples, per key."""
    k_b, k_c = b.shape[1], c.shape[1]
    ib = rng.integers(0, k_b, (2000, k_b))
    ic = ib if paired else rng.integers(0, k_c, (2000, k_c))
    reps = c[:, ic].mean(axis=2) - b[:, ib].mean(axis=2)
    low, high = np.quantile(reps, [0.025, 0.975], axis=1)
    return int(((low > 0) | (high < 0)).sum())


@dataclass
class Tally:
    diffs: int = 0
    keys: int = 0
    excluded: int = 0
    any_flag: int = 0
    any_flag_1pct: int = 0
    single_miss: int = 0
    boot_miss: int = 0
    changed: int = 0
    found: int = 0

    def add(
        self, keys: list[str], b: np.ndarray, c: np.ndarray, paired: bool, rng: np.random.Generator
    ) -> None:
        fam = engine(keys, b, c, paired, "keys")
        each = engine(keys, b, c, paired, "each")
        tested = fam["p_value"].is_not_null().to_numpy()
        self.diffs += 1
        self.keys += int(tested.sum())
        self.excluded += int((excludes(fam) & tested).sum())
        self.any_flag += int(fam["flagged"].any())
        self.any_flag_1pct += int(engine(keys, b, c, paired, "keys", min_effect=1.0)["flagged"].any())
        self.single_miss += int((excludes(each) & tested).sum())
        self.boot_miss += bootstrap_misses(b[tested], c[tested], paired, rng)

    def line(self, label: str) -> str:
        pct = lambda n, d: 100.0 * n / max(d, 1)  # noqa: E731
        text = (
            f"{label:44s} {self.diffs:5d} {self.keys / max(self.diffs, 1):6.1f}  "
            f"{pct(self.excluded, self.keys):6.2f} %  {pct(self.any_flag, self.diffs):6.2f} %  "
            f"{pct(self.any_flag_1pct, self.diffs):6.2f} %  "
            f"{pct(self.single_miss, self.keys):6.2f} %  {pct(self.boot_miss, self.keys):6.2f} %"
        )
        if self.changed:
            text += f"  {pct(self.found, self.changed):6.1f} %"
        return text


def splits(pool: Pool, k: int, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """Up to n splits of k rounds, one capture of each round a side (all of them when fewer exist)."""
    if k > pool.rounds:
        return []
    every = [
        (rounds, sides)
        for rounds in itertools.combinations(range(pool.rounds), k)
        for sides in itertools.product((0, 1), repeat=k)
    ]
    out = []
    for i in rng.permutation(len(every))[:n]:
        rounds, sides = every[i]
        b = np.array([2 * r + s for r, s in zip(rounds, sides, strict=True)])
        out.append((b, b + 1 - 2 * np.array(sides)))
    return out


def calibrate(pool: Pool) -> tuple[np.ndarray, float, np.ndarray]:
    """Per key its mean; the sd of the capture factor; each key's own log-scale sd."""
    x = pool.values
    keep = (x > 0).all(axis=1)
    logs = np.log(x[keep])
    resid = logs - logs.mean(axis=1, keepdims=True)
    factor = np.median(resid, axis=0)
    own = resid - factor
    return x[keep].mean(axis=1), float(factor.std(ddof=1)), own.std(axis=1, ddof=1)


def simulate(
    mean: np.ndarray, factor_sd: float, own_sd: np.ndarray, k: int, rng: np.random.Generator
) -> np.ndarray:
    f = rng.normal(0.0, factor_sd, k)
    e = rng.standard_t(4, (mean.size, k)) / np.sqrt(2.0) * own_sd[:, None]  # t4 has variance 2
    return mean[:, None] * np.exp(f[None, :] + e)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--splits", type=int, default=200, help="real splits per k (at most)")
    parser.add_argument("--sims", type=int, default=400, help="simulated diffs per k")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    head = (
        f"{'pool, k a side, pairing, source':44s} diffs  keys   excl. 0   any flag  flag>=1%   95 % t    "
        "old boot   power@2sd"
    )
    print(f"FDR {FDR}; per-key intervals at 1 - max(R,1)·FDR/m; seed {args.seed}\n")
    for pool in pools(unpacked()):
        print(f"{pool.name}: {len(pool.keys)} keys, {pool.values.shape[1]} captures")
        print(head)
        mean, factor_sd, own_sd = calibrate(pool)
        keys = [f"k{j}" for j in range(mean.size)]
        for k, paired in itertools.product(KS, (False, True)):
            pairing = "paired" if paired else "unpaired"
            real = Tally()
            for ib, ic in splits(pool, k, args.splits, rng):
                real.add(pool.keys, pool.values[:, ib], pool.values[:, ic], paired, rng)
            if real.diffs:
                print(real.line(f"  k={k} {pairing} real splits"))
            sim = Tally()
            for _ in range(args.sims):
                b = simulate(mean, factor_sd, own_sd, k, rng)
                c = simulate(mean, factor_sd, own_sd, k, rng)
                if paired:  # a pair shares its capture factor (interleaved runs see the same state)
                    shared = rng.normal(0.0, factor_sd, k)
                    b, c = b * np.exp(shared), c * np.exp(shared)
                sim.add(keys, b, c, paired, rng)
                spread = np.sqrt(own_sd**2 + factor_sd**2)
                moved = c * np.exp(2.0 * spread)[:, None]
                fam = engine(keys, b, moved, paired, "keys")
                sim.changed += len(keys)
                sim.found += int(fam["flagged"].sum())
            print(sim.line(f"  k={k} {pairing} simulated"))
        print()


if __name__ == "__main__":
    main()
