"""Coverage of the rounds interval (:func:`benchsite.stats.combine_rounds`), by simulation.

Each simulated run measures a case in k rounds; each round is a process whose level is the true
level times exp(N(0, between)) and whose 40 samples scatter around it by 2% (log-normal). The
round's interval is benchsite's (:func:`benchsite.stats.summarize`), the rounds are combined as
a run combines them. Printed per k and between-process spread: how often the interval covers
the true level, how often the case is flagged irreproducible, the median half-width, how often
two independent runs' intervals overlap and how often a rerun's median falls inside.

    python benchmarks/rounds_coverage.py
    python benchmarks/rounds_coverage.py --trials 2000
"""

from __future__ import annotations

import argparse
import math
import random

from benchsite.measure.rounds import reproducible
from benchsite.stats import RoundsSummary, combine_rounds, summarize


def simulated_run(rng: random.Random, rounds: int, between: float) -> RoundsSummary:
    medians, intervals = [], []
    for _ in range(rounds):
        level = math.exp(rng.gauss(0, between))
        found = summarize([level * math.exp(rng.gauss(0, 0.02)) for _ in range(40)])
        medians.append(found.median_s)
        intervals.append((found.ci_low_s, found.ci_high_s))
    return combine_rounds(medians, intervals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=400)
    args = parser.parse_args()
    rng = random.Random(1)
    for rounds in (3, 5):
        for between in (0.0, 0.01, 0.03, 0.05, 0.10):
            covered = flagged = overlap = inside = 0
            widths = []
            for _ in range(args.trials):
                one, two = simulated_run(rng, rounds, between), simulated_run(rng, rounds, between)
                covered += one.ci_low_s <= 1 <= one.ci_high_s
                flagged += reproducible(one) is False
                overlap += one.ci_low_s <= two.ci_high_s and two.ci_low_s <= one.ci_high_s
                inside += one.ci_low_s <= two.median_s <= one.ci_high_s
                widths.append((one.ci_high_s - one.ci_low_s) / 2 / one.median_s)
            share = lambda count: f"{count / args.trials:6.1%}"  # noqa: E731
            print(
                f"{rounds} rounds, between-process sd {between:4.0%}: covers {share(covered)}, "
                f"irreproducible {share(flagged)}, half-width {sorted(widths)[len(widths) // 2]:5.1%}"
                f", two runs overlap {share(overlap)}, rerun's median inside {share(inside)}"
            )


if __name__ == "__main__":
    main()
