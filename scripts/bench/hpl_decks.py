"""Benchmark: HPL Rmax of three decks side by side on this machine, as shares of nominal Rpeak and of
the DGEMM ceiling measured in the same round (figures, not pass/fail; needs an idle machine):

- scalebench: the deck `make run` solves at --scale (HPLCheck's plan on site_configs/sites/local.yaml:
  its xhpl, N, NB, grid, trials, binding, BLAS kernel), whose job also times DGEMM on every rank: the
  ceiling of the round;
- hpcc default: Debian's hpcc with no input file (its built-in deck: NB 80, N for 64 MiB a process),
  launched as the scalebench deck is (same binding and BLAS kernel: the decks differ, nothing else),
  and as installed (plain `mpirun -np R hpcc`, OpenBLAS left to itself);
- HPL sample: hpl_decks/reference/hpl-2.x-sample.HPL.dat as HPL ships it, its grids replaced by this
  machine's (the sample asks for 4 ranks), run by the same xhpl.

Run: .venv/bin/python scripts/bench/hpl_decks.py [--repeats 3] [--scale 1_node] [--max-load 0.5] [--smoke]
Each round runs every deck once, back to back, so noise falls on all of them; before each round the
script waits (up to --wait s) for the 1-minute load to drop below --max-load; each run prints the load
it started at (the decks before it in the round raise it). --smoke checks that the script runs, in
seconds: one round at once, the scalebench deck sized for a solve of SMOKE.time_budget_s with DGEMM timed
at SMOKE_DGEMM_N, and both hpcc decks given it as their hpccinf.txt (hpcc's built-in deck runs for
minutes); its figures are worthless.
"""
import argparse
import math
import os
import statistics
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from scalebench import paths
from scalebench.hpl.case_plan import HplPlan, HplSettings, plan_hpl
from scalebench.hpl.deck import hpccinf_txt, rewrite_hpl_dat
from scalebench.hpl.hpcc_output import parse_hpcc
from scalebench.hpl.outcome import hpl_outcome
from scalebench.site.siteconf import site_systems
from scalebench.site_plan import site_specs

SITE = paths.SITE_CONFIGS / "sites" / "local.yaml"
SAMPLE = paths.HPL_DECKS / "reference" / "hpl-2.x-sample.HPL.dat"
STACK = "openmpi-sm"
DECKS = ("scalebench", "hpcc default", "hpcc as installed", "HPL sample")
SMOKE = HplSettings(time_budget_s=0.02, trials=1)  # N near 1000 here; a smaller N leaves NB 384 no block
SMOKE_DGEMM_N = 256  # the plan's order (2048) takes longer than the whole smoke solve


def local_plan(scale: str, smoke: bool = False) -> tuple[HplPlan, dict[str, str]]:
    """HPLCheck's plan at `scale` on the embedded default (or its --smoke size), and its stack's
    environment variables."""
    config = site_systems(SITE)
    partitions, stacks, _ = site_specs(config)
    stack_env = next(e for e in config["environments"] if e["name"] == STACK)["env_vars"]
    plan = plan_hpl(partitions[0], stacks[STACK], scale, SMOKE if smoke else None, environ=os.environ)
    if smoke and plan.profile.dgemm_env:
        profile = replace(plan.profile, dgemm_n=SMOKE_DGEMM_N)
        plan = replace(plan, profile=profile, env_vars={**plan.env_vars, profile.dgemm_env: str(SMOKE_DGEMM_N)})
    return plan, dict(stack_env)


def wait_for_idle(max_load: float, wait_s: float) -> float:
    deadline = time.monotonic() + wait_s
    while True:
        load = os.getloadavg()[0]
        if load < max_load or time.monotonic() > deadline:
            return load
        time.sleep(10)


def launch(command: list[str], env: dict[str, str], work: Path) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=3600)
    return proc, time.monotonic() - start


def run_deck(name: str, plan: HplPlan, stack_env: dict[str, str], hpcc_input: str | None = None) -> dict:
    """One run of a deck: its best PASSED solve and what it was; hpcc reads `hpcc_input` if given."""
    tasks = plan.job.tasks
    scalebench_launch = ["mpirun", "-np", str(tasks), *plan.job.launcher_options]
    base = dict(os.environ, **stack_env)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if name == "scalebench":
            input_name, text = plan.input_file()
            (work / input_name).write_text(text)
            proc, wall = launch([*scalebench_launch, plan.binary], dict(base, **plan.env_vars), work)
            outcome = hpl_outcome(proc.stdout, proc.stderr, hpcc=False, expected_cases=plan.expected_cases,
                                  tasks=tasks, rpeak_gflops=plan.rpeak_gflops)
            rows, dgemm = outcome.hpl.rows, outcome.dgemm_ceiling_gflops
        elif name == "HPL sample":
            text = rewrite_hpl_dat(SAMPLE.read_text(), grids=[(plan.deck.p, plan.deck.q)])
            (work / "HPL.dat").write_text(text)
            env = {k: v for k, v in plan.env_vars.items() if k != plan.profile.dgemm_env}
            proc, wall = launch([*scalebench_launch, plan.binary], dict(base, **env), work)
            outcome = hpl_outcome(proc.stdout, proc.stderr, hpcc=False, expected_cases=tests_in(text),
                                  tasks=tasks, rpeak_gflops=plan.rpeak_gflops)
            rows, dgemm = outcome.hpl.rows, None
        else:  # hpcc with no hpccinf.txt (but a smoke run's): its built-in defaults
            if hpcc_input is not None:
                (work / "hpccinf.txt").write_text(hpcc_input)
            if name == "hpcc default":
                env = {k: v for k, v in plan.env_vars.items() if k != plan.profile.dgemm_env}
                command = [*scalebench_launch, "hpcc"]
            else:
                env, command = {}, ["mpirun", "-np", str(tasks), "hpcc"]
            proc, wall = launch(command, dict(base, **env), work)
            parsed = parse_hpcc((work / "hpccoutf.txt").read_text())
            summary = parsed.last_summary or {}
            rows = parsed.hpl.rows if parsed.hpl else ()
            star, procs = summary.get("StarDGEMM_Gflops"), summary.get("CommWorldProcs")
            dgemm = star * procs if isinstance(star, float) and isinstance(procs, int) else None
    passed = [r for r in rows if r.status == "PASSED"]
    if proc.returncode or not passed:
        raise SystemExit(f"{name}: no PASSED solve (exit {proc.returncode}): {proc.stderr[-500:]}")
    best = max(passed, key=lambda r: r.gflops)
    return {"rmax": best.gflops, "n": best.n, "nb": best.nb, "grid": f"{best.p}x{best.q}", "tests": len(rows),
            "passed": len(passed), "dgemm": dgemm, "wall": wall}


def tests_in(hpl_dat: str) -> int:
    """The tests an HPL.dat asks for: the product of its list counts (Ns, NBs, grids, PFACTs, NBMINs,
    NDIVs, RFACTs, BCASTs, DEPTHs)."""
    lines = hpl_dat.splitlines()
    return math.prod(int(lines[i].split()[0]) for i in (4, 6, 9, 13, 15, 17, 19, 21, 23))


def spread(values: list[float], fmt: str) -> str:
    if len(values) == 1:
        return format(values[0], fmt)
    return f"{format(statistics.median(values), fmt)} [{format(min(values), fmt)}-{format(max(values), fmt)}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", default="1_node", help="the make run scale whose deck is compared (default 1_node)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-load", type=float, default=0.5)
    parser.add_argument("--wait", type=float, default=1800, help="longest wait for --max-load, s (default 1800)")
    parser.add_argument("--smoke", action="store_true", help="a run in seconds that checks the script works")
    args = parser.parse_args()

    plan, stack_env = local_plan(args.scale, args.smoke)
    if plan.missing:
        raise SystemExit(plan.missing)
    hpcc_input = hpccinf_txt(plan.deck) if args.smoke else None
    if args.smoke:
        args.repeats, args.wait = 1, 0
    print(f"Rpeak {plan.rpeak_gflops:.1f} Gflop/s nominal ({plan.rpeak_derivation}); {plan.job.tasks} ranks, "
          f"binding {' '.join(plan.job.launcher_options)}; BLAS kernel {plan.blas_kernel}")
    runs: dict[str, list[dict]] = {name: [] for name in DECKS}
    for round_no in range(1, args.repeats + 1):
        wait_for_idle(args.max_load, args.wait)  # then the decks back to back: the round shares its noise
        for name in DECKS:
            load = os.getloadavg()[0]
            run = run_deck(name, plan, stack_env, hpcc_input)
            runs[name].append(run)
            ceiling = runs["scalebench"][-1]["dgemm"]
            print(f"round {round_no} {name:18s} load {load:4.2f}  Rmax {run['rmax']:7.2f} Gflop/s  N={run['n']} "
                  f"NB={run['nb']} {run['grid']}  {run['passed']}/{run['tests']} PASSED  {run['wall']:5.1f} s"
                  + (f"  (own DGEMM {run['dgemm']:.1f})" if run["dgemm"] else "")
                  + (f"  round ceiling {ceiling:.1f}" if name == "scalebench" and ceiling else ""), flush=True)

    def per_round(name: str, ratio) -> list[float]:
        return [ratio(run, i) for i, run in enumerate(runs[name])]

    ceilings = [r["dgemm"] for r in runs["scalebench"]]
    print(f"\nDGEMM ceiling (scalebench's job, every rank at once): {spread(ceilings, '.1f')} Gflop/s; "
          f"median [min-max] of {args.repeats} round(s)")
    header = ("deck", "N", "NB", "P x Q", "tests", "Rmax (Gflop/s)", "of Rpeak", "of DGEMM", "x hpcc default",
              "wall (s)")
    lines = []
    for name in DECKS:
        first = runs[name][0]
        lines.append((
            name, str(first["n"]), str(first["nb"]), first["grid"], str(first["tests"]),
            spread([r["rmax"] for r in runs[name]], ".2f"),
            spread(per_round(name, lambda r, i: 100 * r["rmax"] / plan.rpeak_gflops), ".1f") + "%",
            spread(per_round(name, lambda r, i: 100 * r["rmax"] / ceilings[i]), ".1f") + "%",
            spread(per_round(name, lambda r, i: r["rmax"] / runs["hpcc default"][i]["rmax"]), ".2f"),
            spread([r["wall"] for r in runs[name]], ".1f")))
    widths = [max(len(row[i]) for row in (header, *lines)) for i in range(len(header))]
    for row in (header, tuple("-" * w for w in widths), *lines):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


if __name__ == "__main__":
    main()
