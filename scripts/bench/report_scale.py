"""Benchmark: `scalebench report` over a year of nightly results, first (reading every run report and
writing the index beside them) and again (reading the index). Target: the second in 10 s or less for
1 000 000 performance records on a 2-core machine.

Run (under the shared lock): flock /tmp/sb-heavy.lock nice -n 19 .venv/bin/python scripts/bench/report_scale.py \
        [--records 1000000] [--keep DIR]
(--keep DIR: generate into DIR and keep it; a later run with the same DIR measures the same run reports
again, after removing DIR/index so that the first report builds it.)

Generates a results store of ReFrame run reports in a temporary directory (test cases copied from the
real report in tests/data/reframe, as the tests do): two systems, three stacks each, every run holding
HPL at 1-64 nodes, LAMMPS (two workloads) and OpenFOAM at 1-256 processes and OSU bandwidth/latency at
24 message sizes, with +-5% noise between repeats, the runs spread over the 365 nights of a year. Then
runs `scalebench report` (its default formats: md and html, the CSV only when asked for) twice as a user
would, and prints each wall time and CPU time (user + system of the report and its chart worker: on a
machine other work shares, wall time says as much about the others), the sizes of the run reports, the
index and a CSV if one was written, whether the two reports are the same, and the machine's load.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))  # the synthetic-report builder the tests use

import reframe_reports as rr  # noqa: E402

SYSTEMS = {"vendorA": ("openmpi-ucx", "openmpi-tcp", "mvapich2"), "vendorB": ("cray-mpich", "openmpi-ucx", "intel-mpi")}
NODES = (1, 2, 4, 8, 16, 32, 64)
PROCS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
TARGET_S = 10.0
SCALEBENCH = Path(sys.executable).with_name("scalebench")


def _noisy(values: dict[int, float], rng: random.Random) -> dict[int, float]:
    return {k: v * rng.uniform(0.95, 1.05) for k, v in values.items()}


def one_run(system: str, stack: str, quality: float, rng: random.Random) -> list[dict[str, Any]]:
    """The test cases of one run; `quality` scales how well the stack does."""
    hpl = {n: 900.0 * n * (quality - 0.02 * n ** 0.5) for n in NODES}
    lj = {p: 100.0 * p / (1 + 0.004 * p * p / quality) for p in PROCS}  # peaks, then degrades
    eam = {p: 40.0 * p / (1 + 0.002 * p * p / quality) for p in PROCS}
    foam = {p: 9.0 / p + 0.0002 * p / quality for p in PROCS}  # s/step
    bandwidth, latency = rr.hockney(1.5 / quality, 12000.0 * quality)
    return [*rr.hpl(stack, _noisy(hpl, rng), system=system),
            *rr.lammps(stack, _noisy(lj, rng), workload="lj", system=system),
            *rr.lammps(stack, _noisy(eam, rng), workload="eam", system=system),
            *rr.openfoam(stack, _noisy(foam, rng), system=system),
            *rr.osu(stack, _noisy(bandwidth, rng), _noisy(latency, rng), system=system)]


def records_per_run() -> int:
    return sum(len(c["perfvalues"]) for c in one_run("s", "x", 1.0, random.Random(0)))


def generate(root: Path, wanted: int, seed: int = 1) -> tuple[int, int]:
    """(records, report files) written under root/runs/, one night of the year after another."""
    rng = random.Random(seed)
    per_night = sum(len(stacks) for stacks in SYSTEMS.values())
    runs = -(-wanted // records_per_run())
    count = files = 0
    while count < wanted:
        for system, stacks in SYSTEMS.items():
            for rank, stack in enumerate(stacks):
                if count >= wanted:
                    break
                cases = one_run(system, stack, 1.0 - 0.1 * rank, rng)
                count += sum(len(c["perfvalues"]) for c in cases)
                night = files * 365 // max(runs, per_night)  # 2026-01-01 onwards, from 02:00 UTC
                seconds = 1767225600 + 86400 * night + 7200 + files % 3600
                start = time.strftime("%Y%m%dT%H%M%S+0000", time.gmtime(seconds))
                files += 1
                rr.write_run(root, f"{start[:15]}Z-{system}-{files}", cases, start=start,
                             provenance={"git_describe": "v1.0-bench"})
    hour_ago = time.time() - 3600  # written by last night's runs, not a moment ago (index.py: racy stats)
    for path in (root / "runs").glob("*/report.json"):
        os.utime(path, (hour_ago, hour_ago))
    return count, files


def _cpu_s() -> float:
    """User and system time of the children waited for (a report, and its chart worker it waited for)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def report(root: Path, out: Path) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(wall seconds, CPU seconds, the process) of one `scalebench report`."""
    start, cpu = time.perf_counter(), _cpu_s()
    proc = subprocess.run([str(SCALEBENCH), "report", str(root), "--out", str(out)], capture_output=True, text=True,
                          timeout=3600)
    return time.perf_counter() - start, _cpu_s() - cpu, proc


def _size(paths: Any) -> int:
    return sum(p.stat().st_size for p in paths if p.is_file())


def _text(path: Path) -> str:
    return "".join(line for line in path.read_text().splitlines(keepends=True) if "Generated " not in line)


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, default=None, help="generate here and keep it (default: a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scalebench-bench-") as tmp:
        root = args.keep or Path(tmp)
        start = time.perf_counter()
        if (root / "runs").is_dir():  # kept from an earlier run: measure again on the same data
            files = len(list((root / "runs").glob("*/report.json")))
            print(f"reusing {files} ReFrame reports in {root}")
            for made in ("index", "first", "second"):  # the earlier measurement's: the same files, made anew
                shutil.rmtree(root / made, ignore_errors=True)
        else:
            count, files = generate(root, args.records)
            print(f"generated: {count} perf records in {files} ReFrame reports in {time.perf_counter() - start:.1f} s")
        reports = _size((root / "runs").glob("*/report.json"))
        print(f"run reports: {reports / 1e6:.0f} MB (indented, as ReFrame writes them)")
        loads = [os.getloadavg()[0]]
        first_s, first_cpu, first = report(root, root / "first")
        loads.append(os.getloadavg()[0])
        second_s, second_cpu, second = report(root, root / "second")
        loads.append(os.getloadavg()[0])
        for name, proc in (("first", first), ("second", second)):
            if proc.returncode:
                sys.exit(f"the {name} report failed ({proc.returncode}): {proc.stderr[-2000:]}")
        index = _size((root / "index").rglob("*"))
        written = sorted(p.name for p in (root / "second").iterdir() if p.name.startswith("report."))
        same = all(_text(root / "first" / name) == _text(root / "second" / name) for name in written)
        csv = root / "second" / "report.csv"
        print(f"first report (reads every run report, writes the index): {first_s:.2f} s wall, {first_cpu:.2f} s CPU")
        print(f"second report (reads the index): {second_s:.2f} s wall, {second_cpu:.2f} s CPU (target {TARGET_S:g} s)")
        print(f"index: {index / 1e6:.1f} MB ({index / reports:.1%} of the run reports); written: {', '.join(written)}"
              f"{f' (CSV {csv.stat().st_size / 1e6:.0f} MB)' if csv.exists() else ''}; the two reports "
              f"{'are the same' if same else 'DIFFER'}")
        print(f"machine: {_cpu()}, {os.cpu_count()} CPUs; load average {', '.join(f'{x:.2f}' for x in loads)} "
              "(before, between, after)")
        print(json.dumps({"reports": files, "first_seconds": round(first_s, 2), "second_seconds": round(second_s, 2),
                          "first_cpu_seconds": round(first_cpu, 2), "second_cpu_seconds": round(second_cpu, 2),
                          "index_bytes": index, "report_bytes": reports, "same": same, "target_seconds": TARGET_S,
                          "ok": second_s <= TARGET_S and same}))


if __name__ == "__main__":
    main()
