"""Benchmark: ingest + report (md, html, csv) over 100 000 performance records (target <= 5 s).

Run: nice -n 19 .venv/bin/python scripts/bench/report_scale.py [--records 100000] [--keep DIR]
(--keep DIR: generate into DIR and keep it; a second run with the same DIR measures the same data again)

Generates a results store of ReFrame run reports in a temporary directory (test cases copied from the
real report in tests/data/reframe, as the tests do): two systems, three stacks each, every run holding
HPL at 1-64 nodes, LAMMPS (two workloads) and OpenFOAM at 1-256 processes and OSU bandwidth/latency at
24 message sizes, with +-5% noise between repeats. Then times, in this process, the ingest, the tidy
table, the document, the charts and the three files, and prints each figure.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))  # the synthetic-report builder the tests use

import reframe_reports as rr  # noqa: E402

from scalebench.results import report, series, store as results  # noqa: E402

SYSTEMS = {"vendorA": ("openmpi-ucx", "openmpi-tcp", "mvapich2"), "vendorB": ("cray-mpich", "openmpi-ucx", "intel-mpi")}
NODES = (1, 2, 4, 8, 16, 32, 64)
PROCS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _noisy(values: dict[int, float], rng: random.Random) -> dict[int, float]:
    return {k: v * rng.uniform(0.95, 1.05) for k, v in values.items()}


def one_run(system: str, stack: str, quality: float, rng: random.Random) -> list[dict[str, Any]]:
    """The test cases of one run; `quality` scales how well the stack does."""
    hpl = {n: 900.0 * n * (quality - 0.02 * n ** 0.5) for n in NODES}
    lj = {p: 100.0 * p / (1 + 0.004 * p * p / quality) for p in PROCS}  # peaks, then degrades
    eam = {p: 40.0 * p / (1 + 0.002 * p * p / quality) for p in PROCS}
    foam = {p: 9.0 / p + 0.0002 * p / quality for p in PROCS}  # s/step
    bandwidth, latency = rr.hockney(1.5 / quality, 12000.0 * quality)
    cases = [*rr.hpl(stack, _noisy(hpl, rng), system=system),
             *rr.lammps(stack, _noisy(lj, rng), workload="lj", system=system),
             *rr.lammps(stack, _noisy(eam, rng), workload="eam", system=system),
             *rr.openfoam(stack, _noisy(foam, rng), system=system),
             *rr.osu(stack, _noisy(bandwidth, rng), _noisy(latency, rng), system=system)]
    return cases


def generate(root: Path, wanted: int, seed: int = 1) -> tuple[int, int]:
    """(records, report files) written under root/runs/."""
    rng = random.Random(seed)
    count = files = 0
    while count < wanted:
        for system, stacks in SYSTEMS.items():
            for rank, stack in enumerate(stacks):
                if count >= wanted:
                    break
                cases = one_run(system, stack, 1.0 - 0.1 * rank, rng)
                count += sum(len(c["perfvalues"]) for c in cases)
                files += 1
                rr.write_run(root, f"20260101T{files:06d}Z-bench-{files}", cases,
                             start=f"20260101T{files:06d}+0000", provenance={"git_describe": "v1.0-bench"})
    return count, files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, default=None, help="generate here and keep it (default: a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scalebench-bench-") as tmp:
        root = args.keep or Path(tmp)
        start = time.perf_counter()
        if (root / "runs").is_dir():  # kept from an earlier run: measure again on the same data
            files = len(list((root / "runs").glob("*/report.json")))
            print(f"reusing {files} ReFrame reports in {root}")
        else:
            count, files = generate(root, args.records)
            print(f"generated: {count} perf records in {files} ReFrame reports in {time.perf_counter() - start:.1f} s")
        size = sum(p.stat().st_size for p in (root / "runs").rglob("report.json"))
        print(f"run reports: {size / 1e6:.0f} MB (indented, as ReFrame writes them)")

        t0 = time.perf_counter()
        with results.paused_gc():  # as write_report does
            sessions, warnings, rows = results.load([root / "runs"])
            t1 = time.perf_counter()
            built = series.build(rows)
        t2 = time.perf_counter()
        count = len(rows)
        print(f"ingest + tidy table ({count} records): {t1 - t0:.2f} s; series ({len(built)}): {t2 - t1:.2f} s")
        del sessions, warnings, rows, built

        wall, cpu = time.perf_counter(), time.process_time()
        written = report.write_report([root / "runs"], root / "report")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        sizes = ", ".join(f"{fmt} {path.stat().st_size / 1e6:.1f} MB" for fmt, path in written.files.items())
        print(f"ingest + report (md, html, csv), end to end: {wall:.2f} s wall, {cpu:.2f} s CPU in this process "
              "(charts: a worker process) "
              f"({sizes}; {len(written.warnings)} warnings)")
        print(f"machine: load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
              f"5e6-iteration Python loop: {_loop_seconds():.2f} s (compare runs under other loads)")
        print(json.dumps({"records": count, "reports": files, "seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
                          "target_seconds": 5.0, "ok": wall <= 5.0}))


def _loop_seconds() -> float:
    """A fixed pure-Python workload: how fast this machine runs Python right now."""
    start, total = time.process_time(), 0
    for i in range(5_000_000):
        total += i
    return time.process_time() - start


if __name__ == "__main__":
    main()
