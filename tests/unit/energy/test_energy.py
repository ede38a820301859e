"""Energy to solution (scalebench.energy): Slurm's accounting read from real outputs, node counters and
their wrap-around, the core-phase window HPL dates, and the Green500 figures built from them."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scalebench.energy import counters, figures, job, sample, slurm
from scalebench.energy.site import EnergySpec
from scalebench.errors import InputError
from scalebench.hpl.output import parse_hpl
from scalebench.parse.hpl_windows import CORE_PHASE, HPCC_SECTION, solve_windows
from scalebench_lab.meter import PowerLaw

DATA = Path(__file__).resolve().parents[2] / "data"
SLURM = DATA / "slurm_energy"


def law(name: str) -> PowerLaw:
    return PowerLaw.from_json(json.loads((SLURM / name).read_text()))


def records(name: str) -> dict[str, slurm.SacctRecord]:
    return {r.job_id: r for r in slurm.parse_sacct((SLURM / name).read_text())}


# --- sacct, from real Slurm 22.05 outputs (scalebench_lab.sacct_vectors) --------------------------------

def test_sacct_allocation_holds_the_metered_energy_within_its_one_second_timestamps():
    """The emulated meter's power law gives the joules; sacct's Start and End are whole seconds, so the
    allocation's true span lies within one second of each: the value lies between those bounds."""
    meter = law("jobs.law.json")
    for job_id, nodes in (("1", ["n1"]), ("2", ["n1", "n2"])):
        record = records("jobs.sacct-X")[job_id]
        energy = slurm.job_energy(record, exclusive=True)
        low = sum(meter.joules(n, record.start + 1, record.end) for n in nodes)
        high = sum(meter.joules(n, record.start, record.end + 1) for n in nodes)
        assert low <= energy.joules <= high, (job_id, low, energy.joules, high)
        assert (energy.seconds, energy.nodes) == (record.elapsed_s, len(nodes))


def test_steps_are_not_the_allocation_and_summing_them_double_counts():
    steps = records("jobs.sacct")
    assert not slurm.job_energy(steps["2.batch"], exclusive=True).joules
    assert "not the allocation" in slurm.job_energy(steps["2.0"], exclusive=True).reason
    whole = steps["2"].energy_j
    assert sum(r.energy_j for k, r in steps.items() if k.startswith("2.")) > 1.5 * whole
    assert steps["2.extern"].energy_j == whole  # PrologFlags=Contain: the extern step spans the allocation


def test_a_shared_job_gets_no_figure():
    energy = slurm.job_energy(records("jobs.sacct-X")["3"], exclusive=False)
    assert energy.joules is None and "shared" in energy.reason


def test_consumed_energy_zero_is_no_reading_not_zero_joules():
    energy = slurm.job_energy(records("no_plugin.sacct")["1"], exclusive=True)
    assert energy.joules is None and "ConsumedEnergyRaw 0" in energy.reason


def test_running_and_pending_jobs_have_no_figure():
    found = records("running.sacct")
    assert found["4"].end is None and found["4"].energy_j is None
    assert found["5"].start is None and found["5"].nodelist == "None assigned"
    for job_id in ("4", "5"):
        assert "has not ended" in slurm.job_energy(found[job_id], exclusive=True).reason


def test_a_wrapped_counter_is_refused_with_the_reason():
    record = records("wrapped.sacct")["1"]
    assert record.energy_j > 1e19
    energy = slurm.job_energy(record, exclusive=True)
    assert energy.joules is None and "wrapped or garbled counter" in energy.reason


def test_a_sacct_line_with_other_fields_is_a_named_error():
    with pytest.raises(InputError, match="3 fields, expected 8"):
        slurm.parse_sacct("1|COMPLETED|0\n")


def test_scontrol_names_the_plugin_its_period_and_the_profile():
    config = slurm.parse_scontrol_config((SLURM / "scontrol.txt").read_text())
    assert (config.plugin, config.node_freq_s, config.task_energy_freq_s, config.profile,
            config.prolog_contain) == ("pm_counters", 1, 1, "hdf5", True)
    assert "acct_gather_energy/pm_counters, sampled every 1 s" in config.describe()
    none = slurm.parse_scontrol_config((SLURM / "scontrol_none.txt").read_text())
    assert none.plugin is None and none.profile is None and not none.prolog_contain
    assert "no energy plugin" in none.describe()


def test_slurm_profile_integrates_to_the_metered_energy():
    """sh5util's samples (whole watts, whole seconds) of job 2's first step, against the meter's law."""
    meter = law("jobs.law.json")
    series = slurm.parse_energy_profile((SLURM / "profile.csv").read_text())
    assert series[("0", "n2")][0] == (1795573007.0, 218.0)  # the repeated first sample kept once
    start, end = 1795573008.0, 1795573012.0
    for node in ("n1", "n2"):
        measured = counters.power_energy_between(series[("0", node)], start, end, max_gap_s=3)
        assert measured == pytest.approx(meter.joules(node, start, end), rel=0.02)
    assert counters.power_energy_between(series[("0", "n1")], start - 5, end, max_gap_s=3) is None


def test_not_a_profile_is_a_named_error():
    with pytest.raises(InputError, match="not an sh5util Energy series"):
        slurm.parse_energy_profile("JobID,Power\n1,2\n")


# --- HPL's solve windows ---------------------------------------------------------------------------

def test_hpl_23_dates_each_solve_and_the_rows_match():
    text = (DATA / "hpl" / "pace_multi4_hpl23.txt").read_text()
    windows = solve_windows(text)
    assert len(windows) == len(parse_hpl(text).rows) == 4
    assert all(w.kind == CORE_PHASE for w in windows)
    start, end = windows[2].epochs(0)
    assert end - start == 61 and parse_hpl(text).rows[2].time_s == 60.83  # to the second


def test_hpl_20_dates_nothing_and_hpcc_dates_its_section():
    assert solve_windows((DATA / "hpl" / "nvidia_cuda_hpl20_truncated.txt").read_text()) == []
    windows = solve_windows((DATA / "hpcc" / "hpcc142_two_appended_runs.txt").read_text())
    assert [w.kind for w in windows] == [HPCC_SECTION, HPCC_SECTION]
    assert windows[0].epochs(0) == (1481107820.0, 1481107822.0)


def test_window_stamps_are_local_time_placed_with_the_nodes_offset():
    text = "HPL_pdgesv() start time Mon Jun  6 12:08:36 2022\n\nHPL_pdgesv() end time   Mon Jun  6 12:26:30 2022\n"
    (window,) = solve_windows(text)
    utc = window.epochs(0)
    assert window.epochs(7200) == (utc[0] - 7200, utc[1] - 7200)
    assert utc[1] - utc[0] == 17 * 60 + 54


def test_broken_stamps_make_no_window():
    for text in ("HPL_pdgesv() start time Mon Feb 31 12:00:00 2022\nHPL_pdgesv() end time   Mon Feb 31 12:00:09 2022\n",
                 "HPL_pdgesv() end time   Mon Jun  6 12:26:30 2022\n",
                 "HPL_pdgesv() start time Mon Jun  6 12:26:30 2022\nHPL_pdgesv() end time   Mon Jun  6 12:00:00 2022\n"):
        assert solve_windows(text) == []


def test_the_rmax_window_is_the_best_rows_and_a_mismatch_names_itself():
    text = (DATA / "hpl" / "pace_multi4_hpl23.txt").read_text()
    windows = solve_windows(text)
    assert figures.rmax_window(windows, 4, 3) == (windows[3], "")
    window, why = figures.rmax_window(windows, 5, 3)
    assert window is None and "4 solve(s) for 5 result row(s)" in why
    assert "HPL 2.0" in figures.rmax_window([], 1, 0)[1]


# --- node counters -----------------------------------------------------------------------------------

def test_counter_text_formats():
    assert counters.parse_pm_counter("1004511 J 1795571173444510 us\n") == (1004511, 1795571173.44451)
    assert counters.parse_pm_counter("12 W 1 us") is None
    assert counters.parse_nvidia_smi("0, 123456\n1, [N/A]\n2, 5000.5\n") == {"gpu0": 123.456, "gpu2": 5.0005}
    rocm = json.dumps({"card0": {"Energy counter": "65628", "Accumulated Energy (uJ)": "1004108.41"},
                       "card1": {"Accumulated Energy (uJ)": "N/A"}, "system": {"Driver version": "6.2.4"}})
    assert counters.parse_rocm_smi(rocm) == {"gpu0": pytest.approx(1.00410841)}
    assert counters.parse_rocm_smi("not json") == {}


def test_a_wrapping_counter_is_unwrapped_and_a_reset_is_a_gap():
    # RAPL: 262144 J range, 100 W for 4 s across the wrap
    readings = [(0.0, 262000.0), (1.0, 262100.0), (2.0, 56.0), (3.0, 156.0), (4.0, 256.0)]
    segments, notes = counters.unwrap(readings, wrap_j=262144.0)
    assert notes == [] and counters.energy_between(segments, 0.5, 3.5) == pytest.approx(300.0)
    segments, notes = counters.unwrap(readings, wrap_j=None)  # no known range: a reset
    assert "reset" in notes[0] and len(segments) == 2
    assert counters.energy_between(segments, 0.5, 3.5) is None
    assert counters.energy_between(segments, 2.5, 3.5) == pytest.approx(100.0)


def test_an_impossible_jump_is_a_glitch_not_energy():
    segments, notes = counters.unwrap([(0.0, 10.0), (1.0, 1e12), (2.0, 1e12 + 100)], wrap_j=None)
    assert "jumped" in notes[0] and counters.energy_between(segments, 0.0, 2.0) is None


def test_pm_counters_and_rapl_readers_find_what_is_readable(tmp_path):
    pm = tmp_path / "pm_counters"
    pm.mkdir()
    (pm / "energy").write_text("5000 J 1000000000 us\n")
    (pm / "accel0_energy").write_text("700 J 1000000000 us\n")
    (pm / "power").write_text("300 W 1000000000 us\n")
    found, read = counters.pm_counters(pm)
    assert [(c.key, c.coverage) for c in found] == [("pm_counters:node", "node"), ("pm_counters:accel0", "gpu")]
    before = time.time()
    assert read()[0].t >= before  # a stamp of another clock (1000 s after the epoch): the time it was read
    stamp = round(time.time() - 0.5, 6)
    (pm / "energy").write_text(f"5000 J {int(stamp * 1e6)} us\n")
    assert read()[0] == counters.Reading("pm_counters:node", pytest.approx(stamp), 5000.0)
    rapl = tmp_path / "powercap"
    for zone, name, value in (("intel-rapl:0", "package-0", "5000000"), ("intel-rapl:0:0", "dram", "1000000"),
                              ("intel-rapl:0:1", "core", "7"), ("intel-rapl:1", "psys", "9")):
        (rapl / zone).mkdir(parents=True)
        (rapl / zone / "name").write_text(name + "\n")
        (rapl / zone / "energy_uj").write_text(value + "\n")
        (rapl / zone / "max_energy_range_uj").write_text("262143328850\n")
    found, read = counters.rapl(rapl)
    assert [(c.key, c.coverage, c.wrap_j) for c in found] == [("rapl:package-0", "cpu_package", 262143.32885),
                                                             ("rapl:dram-0", "dram", 262143.32885)]
    assert sorted(r.joules for r in read()) == [1.0, 5.0]
    assert counters.pm_counters(tmp_path / "absent") == ([], None)
    assert counters.rapl(tmp_path / "absent") == ([], None)


# --- the sampler and the core phase ---------------------------------------------------------------------

def fake_node(tmp_path, host, watts, start=1000.0, seconds=30, step=1.0, offset=0):
    """A sample file as the sampler writes it, of a node drawing `watts` from `start`."""
    header = {"format": sample.FORMAT, "host": host, "utc_offset_s": offset, "interval_s": step,
              "counters": [counters.Counter("pm_counters", "node", "node").to_json()]}
    lines = [json.dumps(header)]
    for i in range(int(seconds / step) + 1):
        t = start + i * step
        lines.append(json.dumps({"t": t, "r": {"pm_counters:node": [t, 1e6 + watts * (t - start)]}}))
    path = sample.output_path(tmp_path, host)
    path.write_text("\n".join(lines) + "\n")
    return path


def window(start, end):
    return figures.SolveWindow(CORE_PHASE, float(start), float(end))


def test_core_phase_from_every_nodes_samples(tmp_path):
    fake_node(tmp_path, "n1", 200.0)
    fake_node(tmp_path, "n2", 300.0)
    measured = figures.core_from_samples(sample.read_directory(tmp_path), window(1005, 1015), nodes=2)
    assert measured.joules == pytest.approx(5000.0) and measured.watts == pytest.approx(500.0)
    assert measured.coverage == ("node",) and measured.gflops_per_watt(1000.0) == pytest.approx(2.0)
    result = figures.combine(measured, None)
    assert result.figures(1000.0) == {"energy": (5.0, "kJ"), "power": (0.5, "kW"),
                                      "gflops_per_watt": (pytest.approx(2.0), "Gflop/s/W")}


def test_core_phase_needs_every_node_and_the_whole_window(tmp_path):
    fake_node(tmp_path, "n1", 200.0)
    samples = sample.read_directory(tmp_path)
    assert "from 1 of 2 node(s)" in figures.core_from_samples(samples, window(1005, 1015), nodes=2)
    assert "do not cover" in figures.core_from_samples(samples, window(1020, 1040), nodes=1)
    assert "under the 5 s" in figures.core_from_samples(samples, window(1005, 1007), nodes=1)


def test_a_node_without_counters_is_named(tmp_path):
    sample.run(sample.Sampler([], [], 1.0), sample.output_path(tmp_path, "vm"))
    assert figures.core_from_samples(sample.read_directory(tmp_path), window(1005, 1015), nodes=1) == (
        "no readable energy counter on vm")


def test_a_cut_last_line_is_dropped_and_a_foreign_file_is_named(tmp_path):
    path = fake_node(tmp_path, "n1", 200.0)
    path.write_text(path.read_text() + '{"t": 2000, "r": {"pm_counters:node": [2000, 9')
    assert sample.read_samples(path).segments["pm_counters:node"][0].times[-1] == 1030.0
    other = tmp_path / "x.energy.jsonl"
    other.write_text("hello\n")
    with pytest.raises(InputError, match="not a scalebench energy sample file"):
        sample.read_samples(other)


def test_the_sampler_writes_what_it_reads_and_stops(tmp_path):
    pm = tmp_path / "pm"
    pm.mkdir()
    (pm / "energy").write_text("5000 J 1000000000 us\n")
    found, read = counters.pm_counters(pm)
    rounds = sample.run(sample.Sampler(found, [read], 0.01), tmp_path / "out" / "n1.energy.jsonl", duration_s=0.05)
    samples = sample.read_samples(tmp_path / "out" / "n1.energy.jsonl")
    assert rounds >= 2 and samples.counters == tuple(found)
    empty = sample.run(sample.Sampler([], [], 1.0), tmp_path / "out" / "n2.energy.jsonl")
    assert empty == 0 and sample.read_samples(tmp_path / "out" / "n2.energy.jsonl").counters == ()


# --- a case's figures --------------------------------------------------------------------------------

HPL23 = (DATA / "hpl" / "pace_multi4_hpl23.txt").read_text()


def test_no_declared_source_says_so_and_reports_no_zero(tmp_path):
    result = job.case_energy(EnergySpec(), hpl_output=HPL23, rows=4, best_row=3, exclusive=True, nodes=1,
                             nodelist=["n1"], job_id=None, workdir=tmp_path)
    assert result.figures(100.0) == {} and result.source().startswith(figures.NO_SOURCE)


def test_slurm_job_total_and_sampled_core_phase(tmp_path):
    """Job 2 of the real vectors as the job, a sampled core phase inside it, Slurm's answers recorded."""
    start, end = 1795573008, 1795573014
    stamps = (f"HPL_pdgesv() start time {_ctime(start)}\nHPL_pdgesv() end time   {_ctime(end)}\n")
    samples = tmp_path / job.SAMPLES_DIR
    samples.mkdir()
    fake_node(samples, "n1", 200.0, start=1795573007, seconds=8)
    fake_node(samples, "n2", 220.0, start=1795573007, seconds=8)
    spec = EnergySpec.from_site({"source": "slurm", "plugin": "pm_counters", "period_s": 1}, "energy")
    asked = []
    result = job.case_energy(
        spec, hpl_output=stamps, rows=1, best_row=0, exclusive=True, nodes=2, nodelist=["n1", "n2"], job_id="2",
        workdir=tmp_path, slurm_config=lambda: slurm.parse_scontrol_config((SLURM / "scontrol.txt").read_text()),
        sacct=lambda job_id: asked.append(job_id) or records("jobs.sacct-X")[job_id], wait=lambda s: None)
    assert asked == ["2"]
    assert result.core.joules == pytest.approx(420.0 * 6) and result.core.window.startswith(figures.CORE)
    assert result.job.joules == 3628 and result.job.scope == figures.JOB_TOTAL and result.job.seconds == 8
    found = result.figures(84.0)
    assert found["gflops_per_watt"][0] == pytest.approx(0.2)
    assert found["job_gflops_per_watt"][0] == pytest.approx(84.0 / (3628 / 8))
    assert "sacct -X over the allocation" in result.source()


def test_a_plugin_other_than_declared_gives_no_slurm_figure(tmp_path):
    spec = EnergySpec.from_site({"source": "slurm", "plugin": "rapl", "period_s": 1, "sampler": False}, "energy")
    result = job.case_energy(
        spec, hpl_output=HPL23, rows=4, best_row=3, exclusive=True, nodes=1, nodelist=["n1"], job_id="1",
        workdir=tmp_path, slurm_config=lambda: slurm.parse_scontrol_config((SLURM / "scontrol.txt").read_text()),
        sacct=lambda job_id: pytest.fail("sacct asked"), wait=lambda s: None)
    assert result.job is None and "declares acct_gather_energy/rapl" in result.source()


def test_sacct_is_asked_again_until_the_allocation_has_its_energy(tmp_path):
    spec = EnergySpec.from_site({"source": "slurm", "plugin": "pm_counters", "period_s": 1, "sampler": False},
                                "energy")
    final = records("jobs.sacct-X")["1"]
    empty = slurm.SacctRecord(final.job_id, final.state, final.start, final.end, final.elapsed_s, final.nodes,
                              final.nodelist, None)
    answers = [empty, empty, final]
    waits = []
    result = job.case_energy(
        spec, hpl_output="", rows=1, best_row=0, exclusive=True, nodes=1, nodelist=["n1"], job_id="1",
        workdir=tmp_path, slurm_config=lambda: slurm.parse_scontrol_config((SLURM / "scontrol.txt").read_text()),
        sacct=lambda job_id: answers.pop(0), wait=waits.append)
    assert result.job.joules == 1259 and len(waits) == 2


def test_the_node_probe_takes_the_declared_sampler_at_its_period():
    """The energy readings are the node probe's (scalebench.nodeprobe.job writes its one step per node)."""
    spec = EnergySpec.from_site({"source": "slurm", "plugin": "pm_counters", "period_s": 2}, "energy")
    assert job.probe_energy(spec) == ("energy", 2.0)
    assert job.probe_energy(EnergySpec()) is None
    off = EnergySpec.from_site({"source": "slurm", "plugin": "ipmi", "period_s": 30, "sampler": False}, "e")
    assert job.probe_energy(off) is None


# --- the site file key ---------------------------------------------------------------------------------

@pytest.mark.parametrize("data, message", [
    ({"source": "watts"}, "source: 'watts' is not one of slurm, pm_counters, rapl, nvml, rocm_smi, none"),
    ({"source": "slurm", "period_s": 1}, "plugin: None is not one of"),
    ({"source": "slurm", "plugin": "pm_counters"}, "period_s: the sampling period"),
    ({"source": "slurm", "plugin": "pm_counters", "period_s": 0}, "period_s"),
    ({"source": "rapl", "period_s": 1, "plugin": "rapl"}, "plugin: only for source slurm"),
    ({"source": "none", "period_s": 1}, "source none takes no other key"),
    ({"source": "slurm", "plugin": "ipmi", "period_s": 1, "profile_dir": "h5"}, "an absolute directory"),
    ({"source": "slurm", "plugin": "ipmi", "period_s": 1, "meter": 1}, "unknown key(s) meter"),
])
def test_bad_energy_declarations_are_named(data, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        EnergySpec.from_site(data, "site.yaml: partitions[p].energy")


def test_declarations_describe_themselves():
    assert EnergySpec().describe() == "none (no energy source)"
    slurm_spec = EnergySpec.from_site({"source": "slurm", "plugin": "rapl", "period_s": 1,
                                       "profile_dir": "/h5"}, "e")
    assert slurm_spec.describe() == ("Slurm acct_gather_energy/rapl every 1 s (CPU packages + DRAM): job total from "
                                     "sacct; core phase from Slurm's hdf5 profile or node sampler")
    assert EnergySpec.from_json(slurm_spec.to_json()) == slurm_spec
    assert "node sampler of nvml every 0.5 s (GPUs)" in EnergySpec.from_site({"source": "nvml", "period_s": 0.5},
                                                                              "e").describe()


def _ctime(epoch: int) -> str:
    return time.strftime("%a %b %e %H:%M:%S %Y", time.gmtime(epoch))


def test_the_sampler_on_this_machine_writes_what_it_finds_and_exits(tmp_path):
    """Whatever this machine exposes (nothing on a VM without RAPL, pm_counters or GPUs): exit 0, a header."""
    proc = subprocess.run([sys.executable, "-m", "scalebench.energy.sample", "--out", str(tmp_path),
                           "--interval", "0.05", "--duration", "0.2"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    found = sample.read_directory(tmp_path)
    assert len(found) == 1 and found[0].utc_offset_s == time.localtime().tm_gmtoff
    again = subprocess.run([sys.executable, "-m", "scalebench.energy.sample", "--out", str(tmp_path)],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "exists (one sampler per node and run)" in again.stderr
