"""Benchmark: does the deck `scalebench deck` generates reach >= 97% of the best an exhaustive
NB x grid sweep finds at the same N? (HPL via hpcc + OpenMPI on this machine; needs an idle machine.)

Run: .venv/bin/python scripts/bench/deck_vs_sweep.py [--ranks 2] [--n N] [--repeats 2]
The sweep is one hpcc run over every NB in --nbs and every P x Q grid of the rank count (incl. P > Q),
with the generated deck's algorithm; each combination runs --repeats times (HPL runs each one in
turn, so noise is interleaved) and its best time counts. Prints every combination and the ratio.
"""
import argparse
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from scalebench.hpl import blas, deck, tune
from scalebench.hpl.hpcc_output import parse_hpcc
from scalebench.site import host
from scalebench.site.blas import stack_blas


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--n", type=int, default=None, help="default: the 8 s time budget N of make run")
    parser.add_argument("--nbs", default="96,128,192,256,320,384")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    machine = host.detect()
    request = deck.DeckRequest(nodes=1, ranks_per_node=args.ranks, memory_per_node=machine.memory_bytes)
    generated = deck.make_deck(request, deck.load_rules())
    if args.n is None:
        from scalebench.site import peak
        rpeak = peak.peak_inputs(host=machine).rpeak_gflops(1, args.ranks)
        args.n = deck.largest_n_within(8.0, 0.75 * rpeak)
    n = args.n // generated.nb * generated.nb
    grids = [(p, args.ranks // p) for p in range(1, args.ranks + 1) if args.ranks % p == 0]
    # the generated deck's NB is always swept: the ratio is of its time
    nbs = sorted({int(v) for v in args.nbs.split(",")} | {generated.nb})
    sweep = tune.sweep_deck(generated, nbs=nbs, grids=grids, bcasts=[generated.algorithm.bcast],
                            depths=[generated.algorithm.depth], ns=[n] * args.repeats)
    # The kernel policy of make run's jobs: no stack env here, the BLAS is what Debian's hpcc links.
    linked = stack_blas(None, "", shutil.which("hpcc") or "hpcc")
    choice = blas.choose_coretype({}, os.environ, machine.microarch, linked)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if choice.value:
        env["OPENBLAS_CORETYPE"] = choice.value
    with tempfile.TemporaryDirectory() as work:
        Path(work, "hpccinf.txt").write_text(tune.sweep_hpccinf_txt(sweep))
        subprocess.run(["mpirun", "-np", str(args.ranks), "--map-by", "slot:PE=1", "--bind-to", "core",
                        "hpcc"], cwd=work, env=env, check=True, timeout=3600,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        result = parse_hpcc(Path(work, "hpccoutf.txt").read_text()).hpl
    best_by_combo: dict[tuple[int, int, int], float] = {}
    for row in result.rows:
        if row.status == "PASSED":
            key = (row.nb, row.p, row.q)
            best_by_combo[key] = max(best_by_combo.get(key, 0.0), row.gflops)
    print(f"N={n}, {args.ranks} ranks, kernel {choice.value or 'auto'}, {args.repeats} repeat(s) per combination")
    for (nb, p, q), gflops in sorted(best_by_combo.items(), key=lambda kv: -kv[1]):
        mark = "  <- generated deck" if (nb, p, q) == (generated.nb, generated.p, generated.q) else ""
        print(f"  NB={nb:4d} {p}x{q}: {gflops:8.2f} Gflop/s{mark}")
    best = max(best_by_combo.values())
    mine = best_by_combo[(generated.nb, generated.p, generated.q)]
    print(f"generated deck (NB={generated.nb}, {generated.p}x{generated.q}): {mine:.2f} Gflop/s = "
          f"{mine / best:.1%} of the sweep's best {best:.2f} (target >= 97%)")


if __name__ == "__main__":
    main()
