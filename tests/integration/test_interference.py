"""The HPL check on the embedded default twice, at the whole-node scale: once as the machine is, once with
a CPU hog pinned to the core of its last rank (started and stopped by the test). The node probe measures
the hog, and the disturbed case is noisy naming it; the other run's verdict is what its probe measured
(this machine is shared: other work may disturb the "quiet" run too, and then it must say so); neither
table shows a ratio that cannot be. With the probe off (node_probe=false), the samples it still takes for
a partition's energy readings are no evidence of the case."""
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import local_scales, ranks_at, require_cores, require_tools, require_xhpl, run_reframe
from hpl_outputs import hpl_output, solve
from scalebench.nodeprobe.samples import interference_reasons, interference_record
from scalebench.reporting import noise
from scalebench.reporting import hpl_table
from scalebench.reporting.store import ingest
from scalebench.reporting.table import from_sessions
from scalebench.site.thresholds import report_flags
from wrapped_site import install_wrappers, site_file

pytestmark = pytest.mark.integration

HOG = "sb-cpu-hog"
# About a second per solve (time_budget_s=1 at 75% of Rpeak), a sample every half second.
ARGS = ("-S", "time_budget_s=1", "-S", "efficiency_floor=0", "-S", "probe_interval_s=0.5")


def start_hog(core: int) -> subprocess.Popen:
    """A busy loop on one core, named HOG (its comm, what the probe reports), for at most 5 minutes."""
    spin = (f"import ctypes, os, time\nctypes.CDLL(None).prctl(15, b'{HOG}')\nos.sched_setaffinity(0, {{{core}}})\n"
            "end = time.time() + 300\nwhile time.time() < end: pass\n")
    return subprocess.Popen([sys.executable, "-c", spin])


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a live process, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def hpl_case(run_dir):
    sessions, warnings = ingest([run_dir])
    assert warnings == []
    (case,) = [c for c in sessions[0].cases if c.benchmark == "HPLCheck"]
    assert case.result == "pass", case.fail_reason
    return sessions, case


def ratios_in_table(sessions) -> list[str]:
    return [dict(zip(hpl_table.HPL_HEADER, hpl_table.hpl_cells(line)))["Rmax/DGEMM"]
            for line in hpl_table.hpl_lines(from_sessions(sessions))]


def test_a_cpu_hog_beside_a_rank_is_measured_named_and_makes_the_case_noisy(tmp_path):
    require_xhpl()
    require_cores(2)  # a core of a rank to share, and the others the hog must not disturb
    scale = local_scales()[-1]
    filters = ("-n", f"HPLCheck%scale={scale}$")
    quiet = run_reframe(tmp_path / "quiet", "-r", *filters, *ARGS)
    assert quiet.returncode == 0, quiet.stdout[-3000:] + quiet.stderr[-2000:]
    hog = start_hog(core=ranks_at(scale) - 1)  # ranks bind to cores 0, 1, ...: the last rank's core
    started = time.monotonic()
    try:
        disturbed = run_reframe(tmp_path / "disturbed", "-r", *filters, *ARGS)
        hog_cores = cpu_seconds(hog.pid) / (time.monotonic() - started)
    finally:
        hog.kill()
        hog.wait()
    assert disturbed.returncode == 0, disturbed.stdout[-3000:] + disturbed.stderr[-2000:]
    flags = report_flags()

    sessions, case = hpl_case(tmp_path / "disturbed")
    record = case.recorded("interference")
    assert record["nodes"] == record["expected_nodes"] == 1
    # named among the three foreign processes that used the most, unless three others used as much (work
    # beside the test on a shared machine, sharing the hog's core)
    named = [float(share) for share in re.findall(r"\] ([\d.]+)", record["foreign_top"])]
    assert f"{HOG}[{hog.pid}]" in record["foreign_top"] or (
        len(named) == 3 and min(named) >= 0.8 * hog_cores), (record["foreign_top"], hog_cores)
    assert record["foreign_cores"] > flags["noisy_foreign_cores"]
    verdict = noise.case_noise(case, flags)
    assert verdict.noisy and any(r.startswith("foreign load") for r in verdict.reasons), verdict.reasons
    if f"{HOG}[{hog.pid}]" in record["foreign_top"]:
        assert any(f"{HOG}[{hog.pid}]" in r for r in verdict.reasons)
        assert HOG in case.recorded("interference_summary")
    disturbed_ratios = ratios_in_table(sessions)

    sessions, case = hpl_case(tmp_path / "quiet")
    record = case.recorded("interference")
    assert record["nodes"] == 1 and HOG not in str(record)
    verdict = noise.case_noise(case, flags)
    measured = interference_reasons(record, flags["noisy_steal"], flags["noisy_foreign_cores"])
    # the verdict follows what was measured: every interference measured is a reason, and nothing else is
    assert [r for r in verdict.reasons if r.startswith(("CPU steal", "foreign load"))] == measured
    if not verdict.noisy:
        assert record["foreign_cores"] <= flags["noisy_foreign_cores"] and record["steal_pct"] <= 100 * flags["noisy_steal"]

    for cell in disturbed_ratios + ratios_in_table(sessions):
        assert cell == hpl_table.CEILING_NOT_VALID or float(re.fullmatch(r"([\d.]+)%", cell)[1]) <= 100, cell


def test_with_the_probe_off_the_samples_it_takes_for_energy_are_no_evidence_of_the_case(tmp_path):
    """node_probe=false on a partition with an energy sampler: the probe still runs, for the energy
    readings, beside hogs on every core; the case records no interference, is not noisy, and its DGEMM
    ceiling warning does not blame interference."""
    require_tools("mpirun")
    require_cores(2)
    site = site_file(tmp_path, install_wrappers(tmp_path))
    site.write_text(site.read_text().replace("time_limit: 10m,",
                                             "time_limit: 10m, energy: {source: rapl, period_s: 1},"))
    output = tmp_path / "hpl.out"  # DGEMM at 38% of the 1_core scale's Rpeak (32 Gflop/s): a ceiling warning
    output.write_text("StarDGEMM_N=1000\nCommWorldProcs=1\nStarDGEMM_Gflops=12.1\nDGEMM_Before_Gflops=12.0 12.1\n"
                      + hpl_output([solve(10.0, 2304)] * 3) + "DGEMM_After_Gflops=12.0\n")
    env = dict(os.environ, SCALEBENCH_SITE=str(site), FAKE_HPL_OUTPUT=str(output))
    hogs = [start_hog(core) for core in (0, 1)]
    try:
        proc = run_reframe(tmp_path / "run", "-r", "-n", "HPLCheck%scale=1_core$", "-S", "time_budget_s=0.1",
                           "-S", "efficiency_floor=0", "-S", f"references_dir={tmp_path / 'refs'}",
                           "-S", "node_probe=false", env=env, timeout=300)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    flags = report_flags()
    (stage,) = {path.parent.parent for path in (tmp_path / "run" / "output").rglob("nodeprobe/*.jsonl")}
    probed, _ = interference_record(stage, 1, 1)
    assert interference_reasons(probed, flags["noisy_steal"], flags["noisy_foreign_cores"])  # the hogs were seen

    _, case = hpl_case(tmp_path / "run")
    assert not case.recorded("interference", None) and not case.recorded("interference_summary", None)
    assert not noise.case_noise(case, flags).noisy
    warnings = case.recorded("ceiling_warnings")
    assert "DGEMM reaches 38% of Rpeak" in warnings and "no interference measured" in warnings, warnings
