"""Every check's perf variables are in their units of the figure registry (benchmarks.yaml): the figures
the library measures with a unit of their own (interconnect curves, hpcc, screening, energy) are already
in it, so the perflogs keep the units they had; another unit of the same quantity is converted, one of
another quantity refused."""
import math

import pytest

from scalebench import registry
from scalebench.analysis import scaling
from scalebench.energy import figures as energy
from scalebench.errors import InputError
from scalebench.hpl.hpcc_output import parse_hpcc
from scalebench.reporting import records
from scalebench.benchmarks.hpcc import outcome as hpcc_outcome
from scalebench.benchmarks.netpipe import outcome as netpipe_outcome
from scalebench.benchmarks.netpipe.output import parse_netpipe
from scalebench.benchmarks.osu import outcome as osu_outcome
from scalebench.benchmarks.osu.output import parse_osu
from scalebench.screening.probe import parse_probe
from scalebench.screening.verdict import judge, summary
from scalebench.site.thresholds import report_flags
from screening_outputs import probe_text
from vectors import data_dir, read_vector


def measured():
    """(check, {name: (value, unit)}) as the checks' library functions measure them."""
    netpipe = data_dir("netpipe")
    yield "NetPIPECheck", netpipe_outcome.netpipe_figures(
        parse_netpipe((netpipe / "npopenmpi_sm_2ranks.np.out").read_text()))
    yield "NetPIPEStreamCheck", netpipe_outcome.netpipe_stream_figures(
        parse_netpipe((netpipe / "npopenmpi_sm_stream.np.out").read_text()))
    yield "HPCCNetworkCheck", hpcc_outcome.hpcc_network_figures(parse_hpcc(read_vector("hpcc", "hpcc150_8procs_full")))
    osu = data_dir("osu")
    for check, vector, figure, unit, extra in [
            ("OSULatencyCheck", "osu311_latency_ompi173_tcp_mailinglist", "latency", "us", ""),
            ("OSUBandwidthCheck", "osu59_bw_craympich", "bandwidth", "MB/s", "n_half")]:
        table = parse_osu((osu / f"{vector}.txt").read_text())
        yield check, osu_outcome.osu_measured(table, figure, unit, extra).figures
    names = [f"nid{i:04d}" for i in range(1, 9)]
    yield "ScreeningCheck", summary(judge(parse_probe(probe_text(names)), report_flags()))
    core = energy.Measurement(energy.CORE, 5000.0, 1000.0, 1010.0, 2, "meter", ("node",), "core phase")
    job = energy.Measurement(energy.JOB_TOTAL, 9000.0, 990.0, 1020.0, 2, "sacct", ("node",), "job")
    yield "HPLCheck", energy.EnergyResult(core, job).figures(1000.0)
    rmax_by_cores = {2: 10.0, 4: 18.0, 8: 40.0}  # superlinear at 8: a Karp-Flatt fraction below 0
    yield "HPLScalingCheck", {figure.name: (figure.value, figure.unit) for weak in (False, True)
                              for figure in scaling.scaling_figures(rmax_by_cores, higher_is_better=True, weak=weak)}


@pytest.mark.parametrize("check, figures", list(measured()), ids=lambda v: v if isinstance(v, str) else "")
def test_measured_figures_are_in_their_registry_units(check, figures):
    benchmark = registry.lookup(check)
    assert figures
    for name, (value, unit) in figures.items():
        assert benchmark.unit_of(name) == unit, (check, name)
    assert benchmark.in_units(figures) == {name: value for name, (value, _) in figures.items()}


def test_another_unit_of_the_quantity_is_converted_and_another_quantity_refused():
    osu = registry.lookup("OSULatencyCheck")
    assert osu.in_units({"latency_8": (0.002, "ms")}) == {"latency_8": pytest.approx(2.0)}
    with pytest.raises(InputError, match="latency_8 is measured in MB/s; the registry gives it us"):
        osu.in_units({"latency_8": (2.0, "MB/s")})
    with pytest.raises(InputError, match="figure unknown is measured in s; the registry gives it no unit"):
        osu.in_units({"unknown": (2.0, "s")})


def test_a_figure_per_process_count_is_read_as_its_family():
    scaling_check = registry.lookup("HPLScalingCheck")
    assert [registry.family(scaling_check, name) for name in ("speedup_p4", "weak_efficiency_p16", "speedup_4",
                                                                "speedup_px", "latency_p4")] == [
        "speedup", "weak_efficiency", "speedup_4", "speedup_px", "latency_p4"]
    # bandwidth_p4 of a sized check is no process count: per_procs is the registry's to say
    assert registry.family(registry.lookup("OSUBandwidthCheck"), "bandwidth_p4") == "bandwidth_p4"
    # superlinear scaling is physical: an efficiency above 100 % and a negative serial fraction are read
    assert records.bounds(scaling_check, "efficiency_p8", "%")[2] == 1000
    assert records.bounds(scaling_check, "karp_flatt_p8", "serial fraction")[0] == -math.inf
    assert records.bounds(scaling_check, "speedup_p8", "x")[:2] == (0.0, False)
