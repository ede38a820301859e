"""The STREAM benchmark (scalebench/benchmarks/stream): its parser against real outputs and outputs written from
stream.c's printf formats, the per-node outcome and its sanity, the plan of STREAMCheck, its site keys,
its report section, and that the central registries pick the benchmark up without naming it."""
import json

import pytest
import yaml

import reframe_reports as rr
from cli_calls import cli
from scalebench import benchmark, paths, registry
from scalebench.errors import InputError, ParseError
from scalebench.check import Settings
from scalebench import report
from scalebench.reporting import document, store as results
from scalebench.benchmarks import KINDS, BENCHMARKS
from scalebench.benchmarks.stream import rules
from scalebench.benchmarks.stream.outcome import job_outcome, stream_outcome
from scalebench.benchmarks.stream.output import KERNELS, WORDS, parse_stream
from scalebench.site.partition import PartitionSpec, StackSpec
from scalebench.site.siteconf import site_systems
from scalebench.site_plan import CHECKS, Filters, plan_cases, site_specs, unplanned_checks
from vectors import (assert_linear_time, assert_registered, assert_result_or_parse_error, assert_same,
                     assert_sources_present, load_vector, mutated_texts, printed, sample_texts, vector_names)

GiB = 2**30
VECTORS = vector_names("stream")
HLINE = "-" * 61


# --- outputs written from the sources' printf formats ---------------------------------------------

def stream_c(elements=10_000_000, threads=4, min_times=(0.0130, 0.0131, 0.0190, 0.0191), failed=(), cut=None):
    """McCalpin's stream.c 5.10 as it prints (its fprintf formats), rates from the minimum times."""
    lines = [HLINE, "STREAM version $Revision: 5.10 $", HLINE, "This system uses 8 bytes per array element.", HLINE,
             f"Array size = {elements} (elements), Offset = 0 (elements)",
             f"Memory per array = {elements * 8 / 2**20:.1f} MiB (= {elements * 8 / 2**30:.1f} GiB).",
             "Each kernel will be executed 10 times.", HLINE,
             f"Number of Threads requested = {threads}", f"Number of Threads counted = {threads}", HLINE,
             "Function    Best Rate MB/s  Avg time     Min time     Max time"]
    for name, t in zip(KERNELS, min_times):
        rate = 1e-6 * WORDS[name] * 8 * elements / t
        lines.append(f"{name.capitalize() + ':':<11}{rate:12.1f}  {t * 1.01:11.6f}  {t:11.6f}  {t * 1.05:11.6f}")
    lines.append(HLINE)
    for array in failed:
        lines += [f"Failed Validation on array {array}[], AvgRelAbsErr > epsilon (1.000000e-13)",
                  "     Expected Value: 1.153301e+12, AvgAbsErr: 2.306602e+11, AvgRelAbsErr: 2.000000e-01"]
    if not failed:
        lines.append("Solution Validates: avg error less than 1.000000e-13 on all three arrays")
    lines.append(HLINE)
    return printed(lines[:cut])


def hpcc_table(elements, ranks, rows):
    """build/bin/stream's lines (scripts/stream-driver.c, hpcc's STREAM/stream.c formats)."""
    return printed(["STREAM of hpcc 1.5.0 (STREAM/stream.c): each MPI rank has its own arrays",
                    f"Number of MPI ranks = {ranks}", f"Array size = {elements}, Offset = 0",
                    "Number of Threads requested = 2",
                    "Function      Rate (GB/s)   Avg time     Min time     Max time", *rows, HLINE,
                    "Solution Validates: avg error less than 1.000000e-13 on all three arrays"])


LOCAL = (60_000_000, 1, ["Copy:          37.4081       0.0342       0.0257       0.0564",
                         "Scale:         23.1971       0.0547       0.0414       0.0812",
                         "Add:           27.8088       0.0681       0.0518       0.1154",
                         "Triad:         27.2311       0.0706       0.0529       0.1013"])


# --- the parser -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", VECTORS)
def test_vector_matches_expected_json(name):
    actual, expected = load_vector("stream", name)
    assert_same(actual, expected)


def test_all_stream_vectors_present():
    assert VECTORS == ["hpcc142_two_appended_runs", "hpcc150_8procs_star_stream", "local_1rank_2threads"]
    assert_sources_present("stream", VECTORS)


def test_stream_c_form_rates_are_mb_per_s_of_the_whole_run():
    out = parse_stream(stream_c())
    assert (out.form, out.rate_unit, out.rates_per) == ("stream", "MB/s", "run")
    assert (out.array_elements, out.threads, out.threads_counted, out.ranks) == (10_000_000, 4, 4, None)
    assert out.validated is True and not out.problems
    # 16 bytes x 10^7 elements in 13.0 ms: 12307.7 MB/s, 12.3077 GB/s
    assert out.kernels["copy"].rate == 12307.7 and out.kernels["copy"].rate_gbs == pytest.approx(12.3077)


def test_failed_validation_names_each_array_and_fails_sanity():
    out = parse_stream(stream_c(failed=("a", "c")))
    assert out.validated is False and len(out.failures) == 2
    assert out.failures[0].startswith("Failed Validation on array a")
    outcome = stream_outcome(out, nodes=1, ranks=1, threads=4)
    assert any("did not validate" in p for p in outcome.problems)


def test_output_cut_before_the_verdict_or_a_row_is_no_result_to_trust():
    cut = parse_stream(stream_c(cut=-4))  # the table ends at Add, no verdict
    assert set(cut.kernels) == {"copy", "scale", "add"} and cut.validated is None
    assert any("no triad row" in p for p in cut.problems)
    problems = stream_outcome(cut, nodes=1, ranks=1).problems
    assert any("did not finish" in p for p in problems)
    torn = parse_stream(stream_c()[:stream_c().index("Solution") + 9])  # cut inside the last line
    assert torn.validated is None and "no line end" in torn.cut_line


@pytest.mark.parametrize("text", ["", "\n", "Copy: 1 2 3 4\n", "Function Rate\n", HLINE + "\n",
                                  "Function      Rate (GB/s)   Avg time     Min time     Max time\n",
                                  "\x00\xff garbage \ufffd", "Solution Validates\n"])
def test_no_table_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_stream(text)


@pytest.mark.parametrize("row, why, refused", [
    ("Copy:          nan       0.0342       0.0257       0.0564", "copy rate is not finite", True),
    ("Copy:          -37.4081       0.0342       0.0257       0.0564", "copy rate -37.4081 GB/s is not positive", True),
    ("Copy:          1e30       0.0342       0.0257       0.0564", "more than any machine measures", True),
    ("Copy:          37.4081       0.0342       0.0000       0.0564", "copy minimum time 0 s is not positive", False),
    ("Copy:          374.081       0.0342       0.0257       0.0564", "is not 16 bytes x 60000000 elements", False),
    ("Copy:          37.4081       0.0200       0.0257       0.0564", "minimum time 0.0257 s is above", False),
])
def test_absurd_values_are_named_and_fail_sanity(row, why, refused):
    elements, ranks, rows = LOCAL
    out = parse_stream(hpcc_table(elements, ranks, [row, *rows[1:]]))
    assert any(why in p for p in out.problems), out.problems
    assert (out.kernels["copy"].rate_gbs is None) == refused  # a rate that cannot be is never a number
    outcome = stream_outcome(out, nodes=1, ranks=1, threads=2)
    assert outcome.problems and ("copy" in outcome.node_gbs) != refused


def test_the_rate_check_allows_the_rounding_of_what_was_printed():
    # hpcc prints times to 0.1 ms: 16 B x 2184533 / [0.00295, 0.00305] s spans 11.46 .. 11.85 GB/s
    ok = parse_stream(hpcc_table(2184533, 1, ["Copy:          11.5002       0.0031       0.0030       0.0031"]))
    assert not [p for p in ok.problems if "elements" in p]
    off = parse_stream(hpcc_table(2184533, 1, ["Copy:          11.9002       0.0031       0.0030       0.0031"]))
    assert any("is not 16 bytes x 2184533" in p for p in off.problems)


def test_pathological_lines_parse_in_linear_time():
    n = 200_000
    header = "Function      Rate (GB/s)   Avg time     Min time     Max time\n"
    hostile = [header + "Copy: " + "1" * n + " 1 1 1\n", header + "Copy:" + " " * n + "x\n",
               header + ("Copy: 1 1 1 1\n" * (n // 10)), "Array size = " + "9" * n + "\n" + header,
               "Failed Validation on array a[]" + "x" * n + "\n", ("Function Rate " * n) + "\n"]
    assert_linear_time(parse_stream, hostile)


def test_mutated_real_outputs_give_a_result_or_parse_error():
    texts = mutated_texts([*sample_texts("stream")[1:], stream_c()], seed=20261125, rounds=300, max_edits=30,
                          alphabet="CopyScaleAddTriad:0123456789.e+-nan \n")
    assert_result_or_parse_error(parse_stream, texts)


def test_registry_entry_and_cli(capsys, tmp_path):
    assert_registered("stream", parse_stream, stream_c())
    path = tmp_path / "stream.out"
    path.write_text(stream_c())
    code, out, err = cli(capsys, "parse", "stream", str(path))
    assert code == 0 and err == ""
    assert json.loads(out) == parse_stream(stream_c()).to_dict()


# --- the outcome ----------------------------------------------------------------------------------

def test_hpcc_rates_per_rank_are_made_per_node_and_held_to_the_theoretical_bandwidth():
    elements, _, rows = LOCAL
    out = parse_stream(hpcc_table(elements, 4, rows))
    outcome = stream_outcome(out, nodes=2, ranks=4, threads=2, theoretical_gbs=100.0)
    assert outcome.node_gbs["triad"] == pytest.approx(2 * 27.2311) and not outcome.problems
    assert outcome.triad_fraction == pytest.approx(100 * 2 * 27.2311 / 100.0)
    figures = outcome.figures
    assert figures["triad_fraction"][1] == "%" and figures["memory_bandwidth"] == (100.0, "GB/s")
    registered = registry.registry()["STREAMCheck"]
    assert set(figures) == set(registered.figures) and registered.fom == "triad"
    assert all(registered.figures[name].unit == unit for name, (_, unit) in figures.items())


def test_stream_c_rates_of_the_run_are_divided_over_its_nodes():
    outcome = stream_outcome(parse_stream(stream_c()), nodes=2, ranks=2, threads=4)
    assert outcome.node_gbs["copy"] == pytest.approx(12.3077 / 2) and "triad_fraction" not in outcome.figures


def test_a_rate_above_the_theoretical_bandwidth_means_the_arrays_sat_in_cache():
    elements, ranks, rows = LOCAL
    outcome = stream_outcome(parse_stream(hpcc_table(elements, ranks, rows)), nodes=1, ranks=1, threads=2,
                             theoretical_gbs=30.0)
    assert any("copy 37.41" in p and "caches" in p for p in outcome.problems)


@pytest.mark.parametrize("ranks, threads, why", [(2, 2, "the job launched 2"), (1, 8, "the job asked for 8")])
def test_the_process_geometry_the_program_reports_must_be_the_jobs(ranks, threads, why):
    elements, printed_ranks, rows = LOCAL
    outcome = stream_outcome(parse_stream(hpcc_table(elements, printed_ranks, rows)), nodes=1, ranks=ranks,
                             threads=threads)
    assert any(why in p for p in outcome.problems)


def test_the_job_outcome_reads_the_output_against_the_job_and_records_the_array():
    elements, ranks, rows = LOCAL
    job = benchmark.JobOutput(hpcc_table(elements, ranks, rows), nodes=1, ranks=1, threads=2, args=("123",),
                         partition={"memory_bandwidth_gbs": 30.0, "max_nodes": 1})
    outcome = job_outcome(job)
    assert outcome.theoretical_gbs == 30.0 and any("caches" in p for p in outcome.problems)
    assert outcome.recorded == {"array_elements": elements, "stream_rates": "GB/s per rank (hpcc form)"}


def test_stream_c_fixes_its_array_when_compiled_else_the_asked_one_is_recorded():
    text = stream_c().replace("Array size = 10000000 (elements), Offset = 0 (elements)\n", "")
    job = benchmark.JobOutput(text, nodes=1, ranks=1, threads=4, args=("5000000",), partition={})
    assert job_outcome(job).recorded["array_elements"] == 5_000_000


def test_hpcc_output_without_a_rank_count_cannot_be_made_per_node():
    out = parse_stream(sample_texts("stream")[1])  # hpcc 1.5.0's own StarSTREAM section
    assert any("no rank count" in p for p in stream_outcome(out, nodes=1, ranks=8).problems)


# --- the plan -------------------------------------------------------------------------------------

ZEN4 = PartitionSpec("zen4", "cpu", "slurm", "srun", 16, 128, 768 * GiB, "zen4", 3.1, 16)
STREAM_STACK = StackSpec("s", "s", ("openmpi", "stream"), {"stream_binary": "stream_c.exe"})
HPL_STACK = StackSpec("h", "h", ("openmpi", "hpl"), {})


def test_one_whole_node_one_rank_a_thread_on_every_core():
    [case] = plan_cases([ZEN4], {"s": STREAM_STACK}, {"cpu": ["s"]}, checks=["STREAMCheck"])
    job = case.plan.job
    assert case.params == {"scale": "1_node"}
    assert (job.nodes, job.tasks, job.threads_per_rank, job.exclusive, job.memory) == (1, 1, 128, True, "0")
    assert job.env_vars["OMP_NUM_THREADS"] == "128" and job.env_vars["OMP_PLACES"] == "cores"
    assert "--cpu-bind=cores" in job.launcher_options
    # 25% of 768 GiB is more than hpcc's int index holds: the arrays stop at 2^31 - 1 doubles each
    assert case.plan.args == (str(rules.MAX_ELEMENTS),)


def test_array_elements_knob_sets_the_arrays_and_a_count_out_of_range_is_named():
    stacks, environs = {"s": STREAM_STACK}, {"cpu": ["s"]}
    asked = Settings(benchmarks=(rules.StreamSettings(array_elements=2_000_000),))
    [case] = plan_cases([ZEN4], stacks, environs, asked, checks=["STREAMCheck"])
    assert case.plan.args == ("2000000",)
    for count in (-1, rules.MAX_ELEMENTS + 1):
        with pytest.raises(InputError, match=f"array_elements: {count} is not a count"):
            plan_cases([ZEN4], stacks, environs, Settings(benchmarks=(rules.StreamSettings(array_elements=count),)),
                       checks=["STREAMCheck"])


def test_arrays_take_their_share_of_memory_and_never_less_than_streams_default():
    arrays = rules.array_rules()
    assert arrays.elements(24 * GiB) == int(arrays.memory_fraction * 24 * GiB / 24)
    assert arrays.elements(1 * GiB // 4) == arrays.min_elements
    assert 4 * 480 * 2**20 <= 8 * arrays.elements(24 * GiB)  # this VM's 480 MiB of L3: STREAM's 4x rule


def test_a_site_without_a_stream_program_says_why_there_is_no_case():
    stacks, environs = {"h": HPL_STACK}, {"cpu": ["h"]}
    assert plan_cases([ZEN4], stacks, environs, checks=["STREAMCheck"]) == []
    [why] = unplanned_checks([ZEN4], stacks, environs, [], checks=["STREAMCheck"])
    assert why.check == "STREAMCheck" and "stream" in why.needs


def test_every_shipped_site_plans_stream_only_where_a_stack_has_it():
    for site in sorted((paths.SITE_CONFIGS / "sites").rglob("*.yaml")):
        config = site_systems(site)
        partitions, stacks, environs = site_specs(config)
        cases = plan_cases(partitions, stacks, environs, Settings(), Filters(), checks=["STREAMCheck"])
        having = {s.name for s in stacks.values() if "stream" in s.features}
        assert {c.stack.name for c in cases} <= having, site
        assert all(c.plan.job.tasks == c.plan.job.nodes == 1 for c in cases if c.plan), site


# --- site keys ------------------------------------------------------------------------------------

def _site(tmp_path, **partition_keys):
    data = yaml.safe_load((paths.SITE_CONFIGS / "sites" / "example.yaml").read_text())
    data["partitions"][0].update(partition_keys)
    data["stacks"][0].update(stream_binary="stream_c.exe", features=["openmpi", "stream"])
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_theoretical_bandwidth_reaches_the_partition_and_the_program_the_stack(tmp_path):
    config = site_systems(_site(tmp_path, memory_bandwidth_gbs=460.8))
    assert config["systems"][0]["partitions"][0]["extras"]["memory_bandwidth_gbs"] == 460.8
    assert config["environments"][0]["extras"]["stream_binary"] == "stream_c.exe"


@pytest.mark.parametrize("value", ["460GB/s", 0, -1, True, 1e9, float("nan")])
def test_the_theoretical_bandwidth_is_checked_strictly(tmp_path, value):
    with pytest.raises(InputError) as err:
        site_systems(_site(tmp_path, memory_bandwidth_gbs=value))
    assert ("partitions[cpu].memory_bandwidth_gbs: must be the node's theoretical memory bandwidth in GB/s"
            in str(err.value))


def test_a_misspelt_benchmark_key_gets_the_suggestion(tmp_path):
    with pytest.raises(InputError, match="memory_bandwidth_gbs"):
        site_systems(_site(tmp_path, memory_bandwith_gbs=460.8))


# --- the registries pick the benchmark up ---------------------------------------------------------------

def test_the_benchmark_joins_the_central_lists():
    [stream] = [found for found in BENCHMARKS if found.name == "stream"]
    assert KINDS["stream"] == stream.parse
    assert "STREAMCheck" in CHECKS and "stream" in registry.SECTIONS
    assert {place: set(keys) for place, keys in stream.site_keys().items()} == {
        "stack": {"stream_binary"}, "partition": {"memory_bandwidth_gbs"}}  # other benchmarks add theirs
    assert "stream_binary" in benchmark.site_keys("stack")
    assert "memory_bandwidth_gbs" in benchmark.site_keys("partition")
    assert registry.registry()["STREAMCheck"].section == stream.name
    assert [spec.name for spec in stream.checks] == ["STREAMCheck"] and stream.settings is rules.StreamSettings


# --- the report section -----------------------------------------------------------------------------

def _stream_case(stack, triad, theoretical=None, fraction=None):
    figures = {name: (triad * factor, "GB/s") for name, factor in (("copy", 0.9), ("scale", 0.9), ("add", 1.0),
                                                                    ("triad", 1.0))}
    if theoretical:
        figures.update(memory_bandwidth=(theoretical, "GB/s"),
                       triad_fraction=(fraction if fraction is not None else 100 * triad / theoretical, "%"))
    return rr.testcase("STREAMCheck", figures, params={"scale": "1_node"}, system="cluster", partition="cpu",
                       stack=stack, environ=stack, cpus_per_task=128)


def test_report_section_shows_each_stacks_node_bandwidth_against_the_theoretical(tmp_path):
    rr.write_run(tmp_path, "20260101T000000Z-a-1", [_stream_case("ompi", 700.0, 921.6), _stream_case("mpich", 650.0)])
    rr.write_run(tmp_path, "20260102T000000Z-a-2", [_stream_case("bad", 700.0, 921.6, fraction=10.0)])
    loaded = results.load([tmp_path], index=False)
    blocks = report.build_document(loaded.table, loaded.warnings)
    start = next(i for i, b in enumerate(blocks)
                 if isinstance(b, document.Heading) and b.text == "Memory bandwidth (STREAM)")
    table = next(b for b in blocks[start:] if isinstance(b, document.Table))
    rows = {row[1]: row for row in table.rows}
    assert set(rows) == {"ompi", "mpich"}  # the case whose fraction is not triad / theoretical is left out
    header = list(table.header)
    assert rows["ompi"][header.index("Triad (GB/s)")] == "700"
    assert rows["ompi"][header.index("Triad / theoretical (%)")] == "75.95"
    assert rows["mpich"][header.index("Triad / theoretical (%)")] == "-"
    assert any("triad_fraction 10 % but triad / memory_bandwidth gives 75.95 %" in w for w in loaded.warnings)
