"""Fuzz campaign: every output parser, the deck generator and `scalebench deck`, fixed seed.

Run: .venv/bin/python scripts/bench/fuzz_tally.py [--seed 20240] [--per-parser 2500] [--deck 5000] [--cli 1500]
Per parser: mutated real outputs of tests/data (truncated, duplicated, noisy, digit-flipped,
NaN/inf, extreme numbers, CRLF, binary garbage, a 1 MB line in about one input of 50) and random
text. Prints per target the inputs tried, results, named errors, crashes, hangs and the slowest
input; exits 1 if any crash or hang. The same inputs every run for a given seed.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "fuzz"))
import fuzzing  # noqa: E402
from scalebench.benchmarks import KINDS  # noqa: E402

Target = Tuple[str, int, Callable[[random.Random], Tuple[str, Callable[[], fuzzing.Outcome]]]]


def parser_input(kind: str, corpus: Dict[str, List[str]]) -> Callable[[random.Random], Tuple[str, Callable]]:
    def draw(rng: random.Random) -> Tuple[str, Callable[[], fuzzing.Outcome]]:
        if rng.random() < 0.2:
            text, how = fuzzing.random_text(rng), "random text"
        else:
            steps = fuzzing.random_steps(rng)
            text, how = fuzzing.mutate(rng.choice(corpus[kind]), steps), "+".join(name for name, _ in steps)
        return how, lambda: fuzzing.parse_outcome(kind, text)
    return draw


def deck_input(rng: random.Random) -> Tuple[str, Callable[[], fuzzing.Outcome]]:
    args = fuzzing.random_deck_args(rng)
    return repr(args)[:200], lambda: fuzzing.deck_outcome(args)


def cli_input(rng: random.Random) -> Tuple[str, Callable[[], fuzzing.Outcome]]:
    argv = fuzzing.random_deck_argv(rng)
    return repr(argv)[:200], lambda: fuzzing.cli_deck_outcome(argv)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=20240)
    parser.add_argument("--per-parser", type=int, default=2500, help="inputs per parser kind")
    parser.add_argument("--deck", type=int, default=5000, help="DeckRequest/make_deck inputs")
    parser.add_argument("--cli", type=int, default=1500, help="`scalebench deck` argument lists")
    args = parser.parse_args()

    corpus = fuzzing.seed_corpus()
    targets: List[Target] = [(f"parse {kind}", args.per_parser, parser_input(kind, corpus)) for kind in sorted(KINDS)]
    targets += [("deck (make_deck)", args.deck, deck_input), ("deck (CLI argv)", args.cli, cli_input)]

    header = (f"{'target':<18} {'inputs':>7} {'results':>8} {'named errors':>13} {'crashes':>8} {'hangs':>6} "
              f"{'slowest s':>10}")
    print(f"fuzz tally, seed {args.seed}, hard limit {fuzzing.HARD_LIMIT_S:g} s per input\n{header}")
    totals: Counter = Counter()
    failures: List[str] = []
    start = time.perf_counter()
    for name, count, draw in targets:
        rng = random.Random(f"{args.seed}:{name}")
        tally: Counter = Counter()
        slowest = (0.0, "")
        for _ in range(count):
            how, run = draw(rng)
            outcome = run()
            tally[outcome.kind] += 1
            if outcome.seconds > slowest[0]:
                slowest = (outcome.seconds, how)
            if not outcome.ok:
                failures.append(f"{name}: {outcome.kind} ({how}): {outcome.detail[:300]}")
        totals.update(tally, inputs=count)
        print(f"{name:<18} {count:>7} {tally[fuzzing.RESULT]:>8} {tally[fuzzing.NAMED_ERROR]:>13} "
              f"{tally[fuzzing.CRASH]:>8} {tally[fuzzing.HANG]:>6} {slowest[0]:>10.3f}  ({slowest[1][:40]})",
              flush=True)
    print(f"{'total':<18} {totals['inputs']:>7} {totals[fuzzing.RESULT]:>8} {totals[fuzzing.NAMED_ERROR]:>13} "
          f"{totals[fuzzing.CRASH]:>8} {totals[fuzzing.HANG]:>6}")
    print(f"wall time: {time.perf_counter() - start:.1f} s")
    for line in failures[:20]:
        print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
