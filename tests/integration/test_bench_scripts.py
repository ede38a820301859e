"""Every script of scripts/bench/ runs against today's library: each one at its smoke size (tiny N, one
repeat, a handful of records, no wait for an idle machine) as a subprocess, exits 0 and prints its
figures. Their figures are worthless at that size; the scripts' own docstrings say how to measure."""
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO, require_tools, require_xhpl
from scalebench.site.partition import SCREEN_MIN_NODES as SCREEN
from slurm_fixtures import require_slurm

pytestmark = [pytest.mark.integration, pytest.mark.slurm_lab]

BENCH = REPO / "scripts" / "bench"
NUMBER = r"-?\d[\d,]*(?:\.\d+)?"


@dataclass(frozen=True)
class Smoke:
    args: tuple[str, ...]
    prints: tuple[str, ...]  # a line matching each (re.MULTILINE) is in its output: its figures
    timeout_s: int = 300


SMOKES = {
    "deck_speed.py": Smoke(("--max-nodes", "200"),
                           (rf"^wall time: {NUMBER} s \({NUMBER} decks/s\); checksum of N: \d+$",)),
    "deck_vs_sweep.py": Smoke(("--n", "400", "--nbs", "96", "--repeats", "1"),
                              (rf"^generated deck \(NB=\d+, \d+x\d+\): {NUMBER} Gflop/s = {NUMBER}% of the sweep",)),
    "evidence_volume.py": Smoke(("--smoke", "--configs", "openmpi-ob1-vader,mpich-ch4-ucx"),
                                (r"^openmpi-ob1-vader \(btl\): NetPIPE 2 ranks: \[-?\d+\] B",
                                 rf"^openmpi-ob1-vader \(btl\): hpcc 2 ranks -?\d+ B, 4 ranks -?\d+ B: {NUMBER} B",
                                 r"^mpich-ch4-ucx \(ucx\): NetPIPE 2 ranks: \[-?\d+\] B")),
    "fuzz_tally.py": Smoke(("--per-parser", "5", "--deck", "5", "--cli", "5"),
                           (r"^total +\d+ +\d+ +\d+ +0 +0$", rf"^wall time: {NUMBER} s$")),
    "hpl_ceiling.py": Smoke(("--smoke",),
                            (rf"^order +\d+: DGEMM +{NUMBER} Gflop/s", rf"^NB \d+ \(N=\d+\) +Rmax +{NUMBER} ",
                             rf"^N \d+ \(1 x plan\) +Rmax +{NUMBER} ")),
    "hpl_decks.py": Smoke(("--smoke",),
                          tuple(rf"^{deck} +\d+ +\d+ +\d+x\d+ +\d+ +{NUMBER} " for deck in
                                ("scalebench", "hpcc default", "hpcc as installed", "HPL sample"))),
    "model_lab.py": Smoke(("--smoke", "--profiles", "10GbE", "--timeout", "600"),
                          tuple(rf"^10GbE +{nodes} +{NUMBER}% +{NUMBER}% +{NUMBER}% +{NUMBER}% +{NUMBER}% " for nodes
                                in (2, 4)), timeout_s=1800),
    "parse_speed.py": Smoke(("--sizes", "1", "--repeats", "1"),
                            tuple(rf"^hpl +{shape} +1 +\d+ +now +{NUMBER} " for shape in ("appended", "rows",
                                                                                         "noise"))),
    "plan_speed.py": Smoke(("--repeat", "1"),
                           (r"^cases: \d+ planned, \d+ left out", rf"^scalebench plan .*: median {NUMBER} s")),
    "predict_speed.py": Smoke(("--repeat", "1"),
                              (r"^HPL cases: \d+ predicted", rf"^`scalebench predict` command: median {NUMBER} s")),
    "probe_cli.py": Smoke(("--cuts", "1", "--per-class", "3"),
                          (rf"^probes: \d+ in {NUMBER} s$", r"^tracebacks = 0, hangs = 0, wrong answers = 0$")),
    "regression_demo.py": Smoke(("--reference-runs", "1", "--min-runs", "1", "--clean-runs", "0", "--time-budget",
                                 "0.05"), (rf"^reference run 1 +Rmax +{NUMBER} Gflop/s", r"^slowdowns detected: ")),
    "report_scale.py": Smoke(("--records", "1"),
                             (rf"^second report \(reads the index\): {NUMBER} s wall", r'"same": true')),
    "screening_wall_time.py": Smoke(("--nodes", str(SCREEN), "--smoke"),  # jobs, passed, nodes screened
                                    (rf"^ScreeningCheck, one job +\d+s +1 +\S+ +1 +{SCREEN} +\d+$",
                                     rf"^NodeHealthCheck --distribute=all +\d+s +{SCREEN} +\S+ +{SCREEN} +{SCREEN} "
                                     r"+\d+$"),
                                    timeout_s=900),
}
# What the machine may lack, by script: the tools it runs (skip, or fail in CI where make test installs them).
TOOLS = {"deck_vs_sweep.py": ("mpirun", "hpcc"),
         "evidence_volume.py": ("mpirun", "mpirun.mpich", "NPopenmpi", "NPmpich2", "hpcc"),
         "hpl_decks.py": ("hpcc",)}
XHPL = ("hpl_ceiling.py", "hpl_decks.py", "model_lab.py", "regression_demo.py")
CLUSTER = ("model_lab.py", "screening_wall_time.py")  # start the throwaway Slurm cluster in netns mode
QUIET = ("regression_demo.py",)  # freezes references from clean (not noisy) HPL runs only
NOISY = re.compile(r"^.*NOT DECIDED.*$", re.MULTILINE)
CPU_CGROUP = Path("/sys/fs/cgroup/cpu/cgroup.procs")  # regression_demo's slowdowns (root, cgroup v1)


def test_every_script_has_a_smoke_run():
    """A new script gets its smoke run here, and a removed one leaves none behind."""
    assert sorted(p.name for p in BENCH.glob("*.py")) == sorted(SMOKES)


def another_cluster() -> str:
    """The slurmctld already running on this machine, if any: one cluster at a time here."""
    found = subprocess.run(["pgrep", "-a", "-x", "slurmctld"], capture_output=True, text=True)
    return found.stdout.strip()


def needs(script: str) -> list[str]:
    """Check what `script` needs; the arguments that fit this machine."""
    require_tools(*TOOLS.get(script, ()))
    if script in XHPL:
        require_xhpl()
    if script in CLUSTER:
        require_slurm("netns")
        running = another_cluster()
        if running:
            pytest.skip(f"another Slurm cluster runs on this machine ({running[:200]}): one at a time")
    if script == "regression_demo.py":
        if os.geteuid() == 0 and CPU_CGROUP.is_file():
            return ["--slowdowns", "0.5"]
        return ["--slowdowns", ""]  # its tiniest: no CPU quota without root and cgroup v1
    return []


def run(script: str, argv: list[str], cwd: Path, timeout_s: int) -> subprocess.CompletedProcess:
    """The script's run. Past its time it is interrupted (SIGINT), not killed: its `finally` then stops
    what it started (a cluster's daemons and namespaces)."""
    with subprocess.Popen([sys.executable, str(BENCH / script), *argv], cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            try:
                stdout, stderr = proc.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                stdout, stderr = proc.communicate()
            pytest.fail(f"{script} {' '.join(argv)} ran over {timeout_s} s:\n{(stdout + stderr)[-3000:]}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


@pytest.mark.parametrize("script", sorted(SMOKES))
def test_smoke_run(script, tmp_path):
    smoke = SMOKES[script]
    argv = [*smoke.args, *needs(script)]
    if script == "evidence_volume.py":
        argv += ["--dir", str(tmp_path)]
    if script == "model_lab.py":
        argv += ["--results", str(tmp_path)]
    proc = run(script, argv, tmp_path, smoke.timeout_s)
    output = proc.stdout + proc.stderr
    if proc.returncode and script in QUIET and (noisy := NOISY.search(output)):
        pytest.skip(f"this machine was not quiet enough for clean HPL runs: {noisy[0].strip()[:300]}")
    assert proc.returncode == 0, f"{script} {' '.join(argv)} exited {proc.returncode}:\n{output[-3000:]}"
    for pattern in smoke.prints:
        assert re.search(pattern, proc.stdout, re.MULTILINE), f"{script} printed no line like {pattern!r}:\n" \
                                                               f"{proc.stdout[-3000:]}"
