"""The screening jobs a site plans: a whole machine in a few jobs of bounded wall time, each node in one;
and what a site lacks for screening said among plan's reasons."""
import json
import math

import pytest
import yaml

from conftest import REPO
from scalebench.cli import main
from scalebench.errors import InputError
from scalebench.screening.jobs import chunk_sizes, expand_hostlist, hostlist

GENOA = REPO / "tests" / "data" / "sites" / "genoa-6144.yaml"


def plan_json(capsys, *args, exit_code=0):
    assert main(["plan", *args, "--json"]) == exit_code
    return json.loads(capsys.readouterr().out)


def screening_cases(plan):
    return [c for c in plan["cases"] if c["check"] == "ScreeningCheck"]


def test_6144_nodes_are_screened_in_a_dozen_jobs_of_ten_minutes_or_less(capsys):
    chunk = yaml.safe_load(GENOA.read_text())["partitions"][0]["screen_chunk_nodes"]
    cases = screening_cases(plan_json(capsys, str(GENOA), "-n", "ScreeningCheck"))
    assert 1 < len(cases) <= math.ceil(6144 / chunk)
    assert sum(c["screening"]["nodes"] for c in cases) == 6144
    for case in cases:
        assert case["job"]["nodes"] == case["screening"]["nodes"] <= chunk
        assert case["job"]["time_limit_s"] <= 600 and case["screening"]["predicted_s"] <= case["job"]["time_limit_s"]
        assert case["job"]["tasks_per_node"] == 192 and case["job"]["threads_per_rank"] == 1  # every core
        assert case["job"]["exclusive"] and case["screening"]["env_vars"]["OPENBLAS_NUM_THREADS"] == "1"
    assert len({c["screening"]["predicted_s"] for c in cases}) == 1  # the node count does not set it


def test_the_text_plan_sums_the_screening_up(capsys):
    assert main(["plan", str(GENOA), "-n", "Screening"]) == 0
    out = capsys.readouterr().out
    assert "Screening cpu with openmpi-ucx: 12 job(s) of 512 nodes (6144 in all), each predicted" in out


def test_a_node_list_is_screened_in_balanced_chunks_naming_their_nodes(capsys):
    cases = screening_cases(plan_json(capsys, str(GENOA), "-n", "ScreeningCheck", "-S",
                                      "screen_nodes=nid[0001-1000],gpu7"))
    assert [c["screening"]["nodes"] for c in cases] == [501, 500]
    assert cases[0]["screening"]["nodelist"] == "nid[0001-0501]"
    assert cases[1]["screening"]["nodelist"] == "gpu7,nid[0502-1000]"


def test_a_node_list_of_too_few_nodes_is_left_out_with_the_reason(capsys):
    plan = plan_json(capsys, str(GENOA), "-n", "ScreeningCheck", "-S", "screen_nodes=nid[1-2]", exit_code=1)
    (left,) = plan["left_out"]
    assert "compares a node with the median of at least 3" in left["left_out"]


@pytest.mark.parametrize("site_change, reason", [
    ({"memory_per_node": "8GiB"}, "lower dgemm_n or stream_n"),
    ({"max_time_limit_s": 60, "time_limit": "1m"}, "longer than the time limit 1m00s"),
])
def test_a_job_the_partition_cannot_hold_is_left_out(tmp_path, capsys, site_change, reason):
    site = yaml.safe_load(GENOA.read_text())
    site["partitions"][0].update(site_change)
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(site))
    plan = plan_json(capsys, str(path), "-n", "ScreeningCheck", exit_code=1)  # nothing left to run
    assert plan["left_out"] and all(reason in c["left_out"] for c in plan["left_out"])


@pytest.mark.parametrize("value", [2, 0, "many", True])
def test_a_chunk_size_that_cannot_be_is_refused(tmp_path, capsys, value):
    site = yaml.safe_load(GENOA.read_text())
    site["partitions"][0]["screen_chunk_nodes"] = value
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(site))
    assert main(["plan", str(path)]) == 2
    assert "screen_chunk_nodes" in capsys.readouterr().err


@pytest.mark.parametrize("check, feature", [("NodeHealthCheck", "hpcc"), ("ScreeningCheck", "screen")])
def test_screening_without_a_stack_for_it_says_what_it_needs(capsys, check, feature):
    site = REPO / "site_configs" / "sites" / "archetypes" / "icelake-roce.yaml"
    assert main(["plan", str(site), "-n", check]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{check} needs a stack with the feature(s) {feature}" in err
    assert "openmpi-ucx-roce [" in err  # what the stacks have instead


def test_plan_lists_the_checks_it_does_not_generate(capsys):
    site = REPO / "site_configs" / "sites" / "testcluster.yaml"
    assert main(["plan", str(site)]) == 0
    out = capsys.readouterr().out
    assert "a stack with the feature(s) screen: ScreeningCheck" in out
    plan = plan_json(capsys, str(site))
    assert {"check": "ScreeningCheck", "needs": "a stack with the feature(s) screen"}.items() <= \
        next(u for u in plan["not_generated"] if u["check"] == "ScreeningCheck").items()


def test_a_partition_too_small_to_screen_says_so(capsys):
    site = REPO / "site_configs" / "sites" / "local.yaml"
    assert main(["plan", str(site), "-n", "NodeHealthCheck"]) == 2
    assert "needs a partition of at least 3 nodes" in capsys.readouterr().err


@pytest.mark.parametrize("nodes, chunks, sizes", [(6144, 12, [512] * 12), (1000, 2, [500, 500]), (7, 3, [3, 2, 2])])
def test_chunks_are_balanced(nodes, chunks, sizes):
    assert chunk_sizes(nodes, chunks) == sizes


@pytest.mark.parametrize("text, names", [
    ("n[1-3,7]", ["n1", "n2", "n3", "n7"]),
    ("nid[0009-0011],login", ["nid0009", "nid0010", "nid0011", "login"]),
    ("rack1-n[1-2]-ib", ["rack1-n1-ib", "rack1-n2-ib"]),
    ("a,a", ["a"]),
    ("c[1-2]n[01-04]", [f"c{c}n0{n}" for c in (1, 2) for n in (1, 2, 3, 4)]),
    ("nid[001000-001002],nid002[000-001]", ["nid001000", "nid001001", "nid001002", "nid002000", "nid002001"]),
])
def test_host_lists_expand_and_compress(text, names):
    assert expand_hostlist(text) == names
    assert sorted(expand_hostlist(hostlist(names))) == sorted(names)


def test_several_brackets_in_one_name_fold_back_to_them():
    names = expand_hostlist("c[1-2]n[01-04]")
    assert hostlist(names) == "c[1-2]n[01-04]"
    assert hostlist(names[:-1]) == "c1n[01-04],c2n[01-03]"


@pytest.mark.parametrize("text", ["", "n[1-", "n[3-1]", "n[1-2]]", "n[a-b]", "n;id", "n[1-9999999]",
                                  "c[1-1000]n[1-1001]", "@rack1", "n1!n2", "n[1-9/2]", "n[1-99999999999999999999]"])
def test_a_host_list_that_cannot_be_is_a_named_error(text):
    with pytest.raises(InputError, match="node list"):
        expand_hostlist(text)
