"""Benchmark: `scalebench predict` of a whole site (target: well under a second for the Zen 4 archetype,
HPL at every scale up to 1024 nodes on both stacks).

Run: .venv/bin/python scripts/bench/predict_speed.py [SITE] [--repeat 5]
Prints the cases predicted, the library call's wall time (plan and predictions, median of the
repeats), and the command's wall time as a user sees it (a new Python process each time, imports
included), with the machine's load: timings taken while other work runs are noise.
"""
import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from scalebench import paths
from scalebench.predict import Given, predict_cases
from scalebench.site_plan import Filters, plan_cases, site_specs
from scalebench.site.siteconf import site_systems

ZEN4 = paths.SITE_CONFIGS / "sites" / "archetypes" / "zen4-ib.yaml"
# What-if figures of an NDR200 node: a 128-core Zen 4's DGEMM per 8-thread rank, 1.5 us, 24 GB/s.
NUMBERS = ["--dgemm-gflops", "300", "--latency-us", "1.5", "--bandwidth-gbs", "24"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("site", nargs="?", default=str(ZEN4))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    library, command = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        cases = plan_cases(*site_specs(site_systems(Path(args.site))), filters=Filters(names=("HPLCheck",)))
        predicted, _ = predict_cases(cases, Given(300.0, 1.5, 24.0))
        library.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "scalebench", "predict", args.site, *NUMBERS], check=True,
                       stdout=subprocess.DEVNULL)
        command.append(time.perf_counter() - start)
    done = [p for p in predicted if p.prediction]
    print(f"site: {args.site}")
    print(f"HPL cases: {len(done)} predicted (largest {max(p.prediction.case.nodes for p in done)} nodes), "
          f"{len(predicted) - len(done)} not predicted")
    print(f"library (plan + predict): median {statistics.median(library):.3f} s over {args.repeat}")
    print(f"`scalebench predict` command: median {statistics.median(command):.3f} s, "
          f"min {min(command):.3f} s over {args.repeat}")
    print(f"load: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
