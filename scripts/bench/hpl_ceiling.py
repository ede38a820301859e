"""Benchmark: what holds `make run`'s HPL below the DGEMM ceiling of its own job (figures, not pass/fail;
needs an idle machine). With the embedded default's plan at --scale (its xhpl, grid, binding, BLAS kernel):

- DGEMM vs order: the ceiling every rank measures at once (the driver's SCALEBENCH_DGEMM_N), by order;
- NB sweep: Rmax at the plan's N for each NB, as a share of the DGEMM ceiling of the same job;
- N sweep: Rmax at the plan's NB for smaller and larger N than the plan's (a solve of N costs N^3).

Run: .venv/bin/python scripts/bench/hpl_ceiling.py [--scale 1_node] [--nbs 128,192,256,384] [--smoke]
--smoke checks that the script runs, in seconds: hpl_decks.py's smoke plan and one value of each sweep
(SMOKE_SWEEPS); its figures are worthless.
"""
import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hpl_decks import launch, local_plan  # noqa: E402 (the same plan and launch as the deck benchmark)

from scalebench.hpl.deck import hpl_dat_lists  # noqa: E402
from scalebench.hpl.outcome import hpl_outcome  # noqa: E402

SMOKE_SWEEPS = {"orders": "256", "nbs": "128", "n_factors": "1.0"}


def solve(plan, stack_env: dict, n: int, nb: int, dgemm_n: int) -> tuple[float | None, float | None, float]:
    """(Rmax of a PASSED solve, DGEMM ceiling of the job, wall s) of one deck."""
    deck = hpl_dat_lists(ns=(n,), nbs=(nb,), grids=((plan.deck.p, plan.deck.q),), algorithm=plan.deck.algorithm)
    env = {**os.environ, **stack_env, **plan.env_vars, plan.profile.dgemm_env: str(dgemm_n)}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "HPL.dat").write_text(deck)
        proc, wall = launch(["mpirun", "-np", str(plan.job.tasks), *plan.job.launcher_options, plan.binary],
                            env, Path(tmp))
    outcome = hpl_outcome(proc.stdout, proc.stderr, hpcc=False, expected_cases=1, tasks=plan.job.tasks,
                          rpeak_gflops=plan.rpeak_gflops)
    return (outcome.rmax_gflops if not outcome.problems else None), outcome.dgemm_ceiling_gflops, wall


def row(label: str, rmax, dgemm, wall: float, rpeak: float) -> str:
    share = f"{100 * rmax / dgemm:5.1f}%" if rmax and dgemm else "    -"
    rmax_text = f"{rmax:7.2f}" if rmax else " FAILED"
    return f"{label:24s} Rmax {rmax_text}  DGEMM {dgemm or 0:6.1f}  Rmax/DGEMM {share}  " \
           f"Rmax/Rpeak {100 * (rmax or 0) / rpeak:5.1f}%  {wall:5.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", default="1_node")
    parser.add_argument("--nbs", default="128,192,256,384")
    parser.add_argument("--orders", default="512,1024,2048,4096")
    parser.add_argument("--n-factors", default="0.6,0.8,1.0,1.2")
    parser.add_argument("--smoke", action="store_true", help="a run in seconds that checks the script works")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE_SWEEPS)
    plan, stack_env = local_plan(args.scale, args.smoke)
    if plan.missing:
        raise SystemExit(plan.missing)
    n, nb, dgemm_n = plan.deck.n, plan.deck.nb, plan.profile.dgemm_n
    print(f"plan: N={n} NB={nb} {plan.deck.p}x{plan.deck.q}, {plan.job.tasks} ranks, Rpeak {plan.rpeak_gflops:.1f} "
          f"Gflop/s, BLAS kernel {plan.blas_kernel}, DGEMM order {dgemm_n}")
    print("\nDGEMM vs order (every rank at once; HPL at N=2000 after it)")
    for order in map(int, args.orders.split(",")):
        rmax, dgemm, wall = solve(plan, stack_env, 2000, nb, order)
        print(f"order {order:5d}: DGEMM {dgemm or 0:6.1f} Gflop/s ({100 * (dgemm or 0) / plan.rpeak_gflops:5.1f}% "
              f"of nominal Rpeak)")
    print(f"\nNB sweep at N={n}")
    for value in map(int, args.nbs.split(",")):
        size = n // value * value
        print(row(f"NB {value} (N={size})", *solve(plan, stack_env, size, value, dgemm_n), plan.rpeak_gflops))
    print(f"\nN sweep at NB={nb}")
    for factor in map(float, args.n_factors.split(",")):
        size = int(n * factor) // nb * nb
        print(row(f"N {size} ({factor:g} x plan)", *solve(plan, stack_env, size, nb, dgemm_n), plan.rpeak_gflops))

if __name__ == "__main__":
    main()
