"""Time `scalebench parse` on large outputs: is parsing linear in the size, and how far below the
256 MiB read limit does it stay? Figures, not pass/fail (a timed test would fail on a slower machine).

Run (under the shared lock; the bigger sizes write files of that size under $TMPDIR):
    flock /tmp/sb-heavy.lock .venv/bin/python scripts/bench/parse_speed.py [--sizes 10,50,100,250]
        [--kinds hpl] [--shapes appended,rows,noise] [--baseline REV] [--repeats 2]

Each output is a real one from tests/data repeated to the size (`appended`: whole runs appended, as
hpcc and HPL append), or many result rows (`rows`: one run of a huge sweep), or a few rows lost in MPI
noise (`noise`). Each measurement runs in a fresh process: the CPU time (user + system, steadier than
the wall time on a shared machine; the wall time is printed too) of reading and parsing the file, of
the JSON `scalebench parse` prints, and the process's peak memory. With --baseline, the same
measurements of the package as it was at REV (git archive) run alternately with the working tree's,
so both see the same machine load.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
MIB = 2**20

# One measurement, in a fresh interpreter: argv = kind, path; prints JSON.
_MEASURE = r"""
import json, resource, sys, time
kind, path = sys.argv[1:3]
from scalebench.benchmarks import parse_file
wall, cpu = time.perf_counter(), time.process_time()
result = parse_file(kind, path)
parsed_cpu, parsed_wall = time.process_time() - cpu, time.perf_counter() - wall
import contextlib, io
from scalebench.cli.common import print_json  # the tree's own printing, as `scalebench parse` prints
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    print_json(result)
text = printed.getvalue()
print(json.dumps({"parse_cpu": parsed_cpu, "parse_wall": parsed_wall,
                  "total_cpu": time.process_time() - cpu, "total_wall": time.perf_counter() - wall,
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "rows": len(result.get("rows") or []), "json_mib": len(text) / 2**20}))
"""


def unit_text(kind: str, shape: str) -> str:
    """One unit of an output of `shape`, repeated to the size asked."""
    real = {"hpl": DATA / "hpl" / "pace_multi4_hpl23.txt", "hpcc": DATA / "hpcc" / "hpcc150_8procs_full.txt",
            "lammps": DATA / "lammps" / "lammps2024_reaxff_2procs_katom.txt",
            "osu": DATA / "osu" / "osu59_bw_craympich.txt",
            "openfoam": DATA / "openfoam" / "ofv2012_icoFoam_cavity_serial.txt",
            "netpipe": DATA / "netpipe" / "npopenmpi_sm_2ranks.np.out"}[kind].read_text()
    if shape == "appended":
        return real
    if shape == "rows" and kind == "hpl":
        return "".join(f"WR11C2R4 {10000:>12} {192:>5} {1:>5} {2:>5} {'6.50':>18} {'1.0256e+02':>19}\n"
                       f"||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   1.2e-03 ...... PASSED\n"
                       for _ in range(1000))
    if shape == "noise":
        return real + "[n001:12345] btl_tcp: connect() to 10.0.0.2 failed: Connection refused (111), retrying\n" * 20000
    raise SystemExit(f"no shape {shape!r} for {kind}")


def write(path: Path, unit: str, size: int) -> None:
    with open(path, "w") as out:
        written = 0
        while written < size:
            out.write(unit)
            written += len(unit)


def baseline_tree(rev: str, into: Path) -> Path:
    """The scalebench package as it was at `rev`, extracted under `into`."""
    archive = into / "baseline.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), rev, "scalebench"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "baseline")
    return into / "baseline"


def measure(kind: str, path: Path, package_root: Path | None) -> dict:
    env = dict(os.environ)
    if package_root is not None:
        env["PYTHONPATH"] = str(package_root)
    else:
        env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, "-c", _MEASURE, kind, str(path)], capture_output=True, text=True,
                          env=env, cwd=package_root or REPO, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"measurement failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,50,100,250", help="MiB, comma-separated")
    parser.add_argument("--kinds", default="hpl")
    parser.add_argument("--shapes", default="appended,rows,noise")
    parser.add_argument("--baseline", default=None, help="a git revision to measure beside the working tree")
    parser.add_argument("--repeats", type=int, default=2, help="measurements of each; the medians are printed")
    args = parser.parse_args()
    with open("/proc/loadavg") as load:
        print(f"load average at start: {load.read().split()[0]}")
    with tempfile.TemporaryDirectory(prefix="scalebench-parse-speed-") as tmp:
        work = Path(tmp)
        trees = {"now": None}
        if args.baseline:
            trees[args.baseline] = baseline_tree(args.baseline, work)
        print(f"{'kind':<8} {'shape':<9} {'MiB':>5} {'rows':>8} {'tree':<10} {'parse cpu s':>11} {'MB/s':>6} "
              f"{'+json cpu s':>11} {'wall s':>7} {'peak MiB':>8}")
        for kind in args.kinds.split(","):
            for shape in args.shapes.split(","):
                unit = unit_text(kind, shape)
                for size in (int(s) for s in args.sizes.split(",")):
                    path = work / f"{kind}-{shape}-{size}.out"
                    write(path, unit, size * MIB)
                    runs: dict[str, list[dict]] = {name: [] for name in trees}
                    for _ in range(args.repeats):
                        for name, root in trees.items():  # alternately: both see the same load
                            runs[name].append(measure(kind, path, root))
                    for name, found in runs.items():
                        med = {key: statistics.median(r[key] for r in found) for key in found[0]}
                        print(f"{kind:<8} {shape:<9} {size:>5} {int(med['rows']):>8} {name:<10} "
                              f"{med['parse_cpu']:>11.2f} {size * MIB / 1e6 / med['parse_cpu']:>6.0f} "
                              f"{med['total_cpu']:>11.2f} {med['total_wall']:>7.2f} {med['rss_mib']:>8.0f}")
                    path.unlink()
    with open("/proc/loadavg") as load:
        print(f"load average at end: {load.read().split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
