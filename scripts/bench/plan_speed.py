"""Benchmark: `scalebench plan` of a whole site (target <= 2 s for the Zen 4 archetype: every check,
scale and stack up to 1024 nodes and the full system).

Run: .venv/bin/python scripts/bench/plan_speed.py [SITE] [--repeat 5]
Prints the cases planned and left out, the library call's wall time (median of the repeats), and the
command's wall time as a user sees it (a new Python process each time, imports included).
"""
import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from scalebench import paths
from scalebench.site_plan import plan_cases, site_specs
from scalebench.site.siteconf import site_systems

ZEN4 = paths.SITE_CONFIGS / "sites" / "archetypes" / "zen4-ib.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("site", nargs="?", default=str(ZEN4))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    library, command = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        cases = plan_cases(*site_specs(site_systems(Path(args.site))))
        library.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "scalebench", "plan", args.site], check=True, capture_output=True)
        command.append(time.perf_counter() - start)
    planned = [c for c in cases if c.plan is not None]
    largest = max((c.plan.job.nodes for c in planned if c.plan.job), default=0)
    print(f"site: {args.site}")
    print(f"cases: {len(planned)} planned, {len(cases) - len(planned)} left out; largest job {largest} nodes")
    print(f"library (site file to every plan): median {statistics.median(library):.3f} s of {args.repeat}")
    print(f"scalebench plan (new process, table printed): median {statistics.median(command):.3f} s, "
          f"max {max(command):.3f} s (target <= 2 s)")


if __name__ == "__main__":
    main()
