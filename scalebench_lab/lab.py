"""Emulated-interconnect lab: HPL efficiency vs node count on shaped links, in miniature.

For each link profile (site_configs/link_profiles.yaml) it starts the throwaway Slurm cluster in
netns mode with that shaping, runs the HPL check at 1..N nodes (one rank per node) and a NetPIPE
ping-pong between two nodes through ReFrame with the stack named after the profile, stops the
cluster, and finally writes one report over all profiles. The classic finding to reproduce:
efficiency stays flat on a fast link and falls on a slow one as nodes are added; the NetPIPE curves
show each link's bandwidth ceiling and n1/2 side by side.

    python -m scalebench_lab.lab [--profiles 10GbE,100Mb] [--nodes 2] [--results results]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from scalebench import paths
from scalebench.errors import ScalebenchError
from scalebench.site.rundir import new_run_dir
from scalebench_lab import cluster

SITE = paths.SITE_CONFIGS / "sites" / "testcluster-netns.yaml"
NODE_SCALES = {1: "1_node", 2: "2_nodes", 4: "4_nodes"}
NETPIPE_MAX_BYTES = 2**20


def reframe_argv(nodes: int, profile: str) -> list[str]:
    scales = "|".join(NODE_SCALES[n] for n in sorted(NODE_SCALES) if n <= nodes)
    checks = paths.CHECKS
    return [str(Path(sys.executable).with_name("reframe")), "-C", str(paths.SITE_CONFIGS / "slurm.py"),
            "-c", str(checks / "hpl.py"), "-c", str(checks / "microbench.py"), "-r",
            "-n", f"HPLCheck%scale=({scales})$|NetPIPECheck%placement=inter_node", "-p", f"tcp-{profile}",
            "-S", "HPLCheck.ranks_per_node=1", "-S", "HPLCheck.efficiency_floor=0",
            # past the shaper's burst, short enough for a 100 Mbit/s link
            "-S", f"NetPIPECheck.max_bytes={NETPIPE_MAX_BYTES}"]


def run_profile(profile: str, nodes: int, results: Path, timeout: float) -> tuple[Path, int]:
    """One profile: cluster up (shaped), HPL at 1..nodes nodes, cluster down whatever happens."""
    run_dir = new_run_dir(results)
    run_dir = run_dir.with_name(f"{run_dir.name}-lab-{profile}")
    work = Path(f"/tmp/sblab-{profile}")  # short: Slurm puts unix sockets under it
    state = cluster.start(work, nodes, "netns", cpus_per_node=1, shape=profile)
    try:
        env = state.client_env()
        env.update(SCALEBENCH_SITE=str(SITE), SCALEBENCH_RUN_DIR=str(run_dir))
        argv = state.client_argv(reframe_argv(nodes, profile))
        status = subprocess.run(argv, env=env, timeout=timeout).returncode
    finally:
        cluster.stop(work)
    return run_dir, status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scalebench_lab.lab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profiles", default="10GbE,100Mb", help="link profiles, fast first")
    parser.add_argument("--nodes", type=int, choices=sorted(NODE_SCALES), default=2,
                        help="largest node count (each node gets one of this machine's cores: "
                             "more nodes than cores oversubscribe them)")
    parser.add_argument("--results", default=str(paths.RESULTS))
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per profile")
    args = parser.parse_args(argv)
    from scalebench.report import write_report
    from scalebench.reporting.hpl_table import hpl_terminal_table

    run_dirs, failed = [], []
    try:
        for profile in args.profiles.split(","):
            print(f"lab: profile {profile}: HPL at 1..{args.nodes} node(s), NetPIPE between two", flush=True)
            run_dir, status = run_profile(profile, args.nodes, Path(args.results), args.timeout)
            run_dirs.append(run_dir)
            if status:
                failed.append(profile)
    except (ScalebenchError, subprocess.TimeoutExpired) as err:
        print(f"lab: error: {err}", file=sys.stderr)
        return 2
    target, sessions, warnings = write_report([str(d) for d in run_dirs], None)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(hpl_terminal_table(sessions))
    print(f"\nReport: {target}")
    if failed:
        print(f"lab: reframe failed for {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
