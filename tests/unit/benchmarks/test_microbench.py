"""Interconnect figures of reframe_tests/microbench.py, on real outputs (tests/data) and hand-made ones."""
import shutil
import stat
import subprocess

import pytest

from scalebench import benchmark, programs, registry
from scalebench.errors import InputError, ParseError
from scalebench.hpl.hpcc_output import parse_hpcc
from scalebench.interconnect import microbench
from scalebench.benchmarks import KINDS, BENCHMARKS
from scalebench.benchmarks.hpcc import outcome as hpcc_outcome
from scalebench.benchmarks.netpipe import outcome as netpipe_outcome
from scalebench.benchmarks.netpipe.output import parse_netpipe
from scalebench.benchmarks.osu import outcome as osu_outcome
from scalebench.benchmarks.osu.output import parse_osu
from scalebench.site.scales import Scale
from scalebench.site_plan import CHECKS
from vectors import data_dir, read_vector

NETPIPE = data_dir("netpipe")


def _netpipe(name: str) -> str:
    return (NETPIPE / name).read_text()


def test_netpipe_file_gives_latency_and_bandwidth_curves_in_us_and_mb_per_s():
    latency, bandwidth = netpipe_outcome.netpipe_curves(parse_netpipe(_netpipe("npopenmpi_sm_2ranks.np.out")))
    # "       1 15.937457   0.00000048": 0.48 us; 15.937457 * 2**20 bits/s = 2.089 MB/s
    assert latency[1] == pytest.approx(0.48)
    assert bandwidth[1] == pytest.approx(15.937457 * 2**20 / 8 / 1e6)
    assert sorted(latency) == sorted(bandwidth) and len(latency) == 46 and max(latency) == 8388608


def test_netpipe_figures_are_sized_with_a_summary():
    figures = netpipe_outcome.netpipe_figures(parse_netpipe(_netpipe("npopenmpi_sm_2ranks.np.out")))
    assert figures["latency_1"] == (pytest.approx(0.48), "us")
    assert figures["bandwidth_8388608"][1] == "MB/s"
    assert figures["min_latency"] == (pytest.approx(0.48), "us")
    peak = max(v for k, (v, _) in figures.items() if k.startswith("bandwidth_"))
    assert figures["peak_bandwidth"] == (pytest.approx(peak), "MB/s")
    assert 1 < figures["n_half"][0] < 8388608 and figures["n_half"][1] == "B"
    # every sized figure is one the registry can split into (figure, size)
    bench = registry.lookup("NetPIPECheck")
    assert all(registry.split_sized(bench, name) for name in figures if name[-1].isdigit())


def test_netpipe_without_a_finite_point_is_a_parse_error():
    with pytest.raises(ParseError, match="no finite latency or bandwidth"):
        netpipe_outcome.netpipe_figures(parse_netpipe("       1 nan   nan\n"))


def test_netpipe_ranks_tell_one_job_from_two_singletons():
    hosts = netpipe_outcome.netpipe_hosts(_netpipe("npopenmpi_sm_2ranks.stdout.txt"))
    assert hosts == {0: "vm", 1: "vm"}
    assert netpipe_outcome.placement_of(hosts) == "intra_node"
    assert netpipe_outcome.placement_of({0: "n001", 1: "n002"}) == "inter_node"
    # both ranks write unbuffered to one output: a rank's line can start inside the other's
    interleaved = "Streaming in one direction only.\nmeasurement of the latency since small1: vm\n\n0: vm\n"
    assert netpipe_outcome.netpipe_hosts(interleaved) == {0: "vm", 1: "vm"}
    screen_row = "  0:       1 bytes 149263 times -->     15.94 Mbps in       0.48 usec\n"
    assert netpipe_outcome.netpipe_hosts(screen_row) == {}
    # the wrong launcher: two 1-process copies, both rank 0
    assert sorted(netpipe_outcome.netpipe_hosts("0: vm\nUsing no perturbations\n0: vm\n")) == [0]


def test_osu_curves_from_real_outputs():
    bandwidth = osu_outcome.osu_curve(parse_osu(read_vector("osu", "osu59_bw_craympich")))
    assert min(bandwidth) >= 1 and all(v > 0 for v in bandwidth.values())
    latency = osu_outcome.osu_curve(parse_osu(read_vector("osu", "osu311_latency_ompi173_tcp_mailinglist")))
    assert 0 in latency  # osu_latency starts at 0 bytes
    summary = microbench.curve_summary(bandwidth)
    assert summary["peak_bandwidth"][0] == max(bandwidth.values())
    assert bandwidth[min(bandwidth)] < summary["peak_bandwidth"][0] / 2 < summary["peak_bandwidth"][0]
    assert min(bandwidth) < summary["n_half"][0] < max(bandwidth)


def test_osu_mbw_mr_message_rate_column_as_printed():
    text = ("# OSU MPI Multiple Bandwidth / Message Rate Test v5.9\n# [ pairs: 2 ] [ window size: 64 ]\n"
            "# Size                  MB/s        Messages/s\n1                       3.50        3500000.00\n"
            "2                       7.10        3550000.00\n")
    table = parse_osu(text)
    assert osu_outcome.osu_curve(table) == {1: 3.5, 2: 7.1}
    assert osu_outcome.osu_message_rate_curve(table) == {1: 3500000.0, 2: 3550000.0}


def test_osu_without_rows_is_a_parse_error():
    with pytest.raises(ParseError, match="no finite row"):
        osu_outcome.osu_curve(parse_osu("# OSU MPI Barrier Latency Test v5.9\n# Avg Latency(us)\n            4.50\n"))


def test_hpcc_network_figures_and_ring_ratio():
    figures = hpcc_outcome.hpcc_network_figures(parse_hpcc(read_vector("hpcc", "hpcc150_8procs_full")))
    summary = parse_hpcc(read_vector("hpcc", "hpcc150_8procs_full")).last_summary
    assert figures["pingpong_latency_avg"] == (summary["AvgPingPongLatency_usec"], "us")
    assert figures["random_ring_bandwidth"] == (summary["RandomlyOrderedRingBandwidth_GBytes"], "GB/s")
    assert figures["random_ring_over_pingpong"][0] == pytest.approx(
        summary["RandomlyOrderedRingLatency_usec"] / summary["AvgPingPongLatency_usec"])
    assert set(figures) <= set(registry.lookup("HPCCNetworkCheck").figures)


def test_hpcc_without_a_latency_figure_names_the_key():
    text = "\n".join(line for line in read_vector("hpcc", "hpcc150_8procs_full").splitlines()
                     if not line.startswith("MinPingPongLatency_usec="))
    with pytest.raises(ParseError, match="MinPingPongLatency_usec is missing"):
        hpcc_outcome.hpcc_network_figures(parse_hpcc(text))


def test_whole_nodes_scale():
    assert microbench.whole_nodes_scale(1).name == "1_node"
    assert microbench.whole_nodes_scale(2).name == microbench.whole_nodes_scale(64).name == "2_nodes"


def test_two_rank_layouts():
    assert microbench.two_rank_layout("intra_node", 1, 2) == (Scale("1_node", 1), 2)
    assert microbench.two_rank_layout("inter_node", 4, 64) == (Scale("2_nodes", 2), 1)
    assert "needs 2 nodes" in microbench.two_rank_layout("inter_node", 1, 64)
    assert "needs 2 cores" in microbench.two_rank_layout("intra_node", 2, 1)
    with pytest.raises(InputError, match="placement"):
        microbench.two_rank_layout("same_socket", 2, 2)


def located(program, directories):
    """What the job's lookup line finds: (exit status, $SCALEBENCH_PROGRAM, stderr), run by bash."""
    line = programs.locate(program, directories)
    proc = subprocess.run(["bash", "-c", f'{line}; echo "${programs.PROGRAM_VARIABLE}"'],
                          capture_output=True, text=True, timeout=30)
    return proc.returncode, proc.stdout.strip(), proc.stderr.strip()


def test_the_job_finds_a_program_under_the_stack_directory_then_on_path(tmp_path):
    deep = tmp_path / "lib exec" / "osu-micro-benchmarks" / "mpi" / "pt2pt"  # a space: quoted
    deep.mkdir(parents=True)
    program = deep / "osu_latency"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o644)
    status, _, stderr = located("osu_latency", [str(tmp_path)])  # not executable
    assert status == 127 and stderr == "scalebench: benchmark program not found: osu_latency"
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    assert located("osu_latency", [str(tmp_path)])[:2] == (0, str(program))
    assert located("no_such_osu_program_xyz", [str(tmp_path)])[0] == 127
    assert located("sh", [])[:2] == (0, shutil.which("sh"))  # PATH


def test_registry_gives_each_point_to_point_figure_its_kind():
    netpipe = registry.lookup("NetPIPECheck")
    assert netpipe.figures["latency"].kind == "latency" and netpipe.figures["bandwidth"].kind == "bandwidth"
    assert netpipe.figures["n_half"].kind is None
    osu_bw, osu_lat = registry.lookup("OSUBandwidthCheck"), registry.lookup("OSULatencyCheck")
    assert osu_bw.figures["bandwidth"].kind == "bandwidth" and osu_lat.figures["latency"].kind == "latency"
    assert osu_bw.suite == osu_lat.suite == "OSU point-to-point"
    assert registry.lookup("OSUCollectiveCheck").suite == "OSU collective latency"  # its title


def test_registry_rejects_an_unknown_figure_kind(tmp_path):
    path = tmp_path / "benchmarks.yaml"
    path.write_text("X:\n  section: microbenchmark\n  figures:\n    latency: {direction: lower, kind: latncy}\n")
    with pytest.raises(InputError, match=r"figures\.latency\.kind.*did you mean 'latency'"):
        registry.load(path)


def test_netpipe_stream_gives_the_message_rate_by_size():
    figures = netpipe_outcome.netpipe_stream_figures(parse_netpipe(_netpipe("npopenmpi_sm_stream.np.out")))
    # "       1 28.274215   0.00000027": 28.274215 * 2**20 / 8 bytes/s of 1-byte messages
    assert figures["message_rate_1"] == (pytest.approx(28.274215 * 2**20 / 8), "msg/s")
    assert figures["small_message_rate"] == figures["message_rate_1"]
    assert figures["message_rate_65536"][0] == pytest.approx(figures["bandwidth_65536"][0] * 1e6 / 65536)
    bench = registry.lookup("NetPIPEStreamCheck")
    assert all(registry.split_sized(bench, name) for name in figures if name[-1].isdigit())


def test_a_netpipe_curve_that_stops_early_or_on_one_rank_is_not_a_measurement():
    output = parse_netpipe((NETPIPE / "npopenmpi_sm_2ranks.np.out").read_text())
    stdout = (NETPIPE / "npopenmpi_sm_2ranks.stdout.txt").read_text()
    whole = netpipe_outcome.netpipe_measured(output, stdout, max_bytes=8388608)
    assert whole.problems == () and whole.placement == "intra_node" and whole.figures
    early = netpipe_outcome.netpipe_measured(output, stdout, max_bytes=16777216)
    assert early.problems == ("NetPIPE's curve stops at 8388608 bytes, before the 16777216 asked: "
                              "the run ended early",)
    one_rank = netpipe_outcome.netpipe_measured(output, "0: vm\n", max_bytes=8388608)
    assert one_rank.problems == ("NetPIPE reports ranks [0], expected [0, 1] (wrong MPI launcher?)",)


def test_netpipe_and_osu_are_benchmarks_of_the_central_lists():
    found = {r.name: r for r in BENCHMARKS}
    for name, checks in (("netpipe", {"NetPIPECheck", "NetPIPEStreamCheck"}),
                         ("osu", {"OSULatencyCheck", "OSUBandwidthCheck", "OSUBiBandwidthCheck",
                                  "OSUMultiBandwidthCheck", "OSUCollectiveCheck"})):
        assert KINDS[name] == found[name].parse
        assert {spec.name for spec in found[name].checks} == checks and checks <= set(CHECKS)
        assert found[name].section is None  # they report in the shared microbenchmark section
        assert all(registry.registry()[check].section == "microbenchmark" for check in checks)
    assert {"netpipe_binary", "osu_dir"} <= set(benchmark.site_keys("stack"))
