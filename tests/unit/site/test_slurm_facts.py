"""scalebench.site.slurm_facts: Slurm's saved outputs (tests/data/slurm/, written for these tests) read
into partitions, node kinds and the facts of scalebench's site files; garbled input is a named error."""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from scalebench import loaders
from scalebench.errors import InputError
from scalebench.site import slurm_facts as sf
from scalebench.units import parse_size

DATA = Path(__file__).resolve().parents[2] / "data" / "slurm"
TWO_KINDS = DATA / "two-kinds"
FORMS = ("multiline", "oneliner")
MiB = 2**20


@pytest.fixture(scope="module", params=FORMS)
def cluster(request) -> sf.SlurmCluster:
    return sf.read_dir(TWO_KINDS / request.param)


def texts(form: str = "oneliner") -> dict[str, str]:
    return {name: (TWO_KINDS / form / name).read_text() for name in sf.COMMANDS}


def from_texts(partition: str | None = None, node: str | None = None, sinfo: str | None = "") -> sf.SlurmCluster:
    given = texts()
    return sf.cluster_from_outputs(partition if partition is not None else given[sf.PARTITION_FILE],
                                   node if node is not None else given[sf.NODE_FILE],
                                   given[sf.SINFO_FILE] if sinfo == "" else sinfo)


# --- both forms read alike ------------------------------------------------------------------------

def test_both_forms_give_the_same_cluster():
    multi, one = (sf.read_dir(TWO_KINDS / form) for form in FORMS)
    assert list(multi.partitions) == list(one.partitions) == ["normal", "gpu", "debug"]
    assert [replace(n, where="") for n in multi.nodes.values()] == [replace(n, where="") for n in one.nodes.values()]
    for name in multi.partitions:
        assert sf.partition_facts(multi.partitions[name]) == sf.partition_facts(one.partitions[name])


def test_a_node_keeps_its_values_with_spaces(cluster):
    node = cluster.nodes["nid001002"]
    assert (node.sockets, node.cores_per_socket, node.threads_per_core, node.memory_mib) == (2, 64, 2, 257000)
    assert node.cores == 128 and node.cpus == 256 and node.features == ("mem256", "zen4")
    assert node.state == "IDLE+DRAIN"
    assert cluster.nodes["gpu03"].gpus == (("h100", 4),)


# --- the two-kind partition ------------------------------------------------------------------------

def test_two_kinds_of_node_in_one_partition(cluster):
    normal = cluster.partitions["normal"]
    assert normal.default and normal.max_time_s == 86400 and normal.max_mem_per_node is None
    small, large = normal.kinds
    assert (small.count, small.nodelist, small.memory_mib, small.features) == (4, "nid[001000-001003]", 257000,
                                                                              ("mem256", "zen4"))
    assert (large.count, large.nodelist, large.memory_mib, large.features) == (2, "nid[001004-001005]", 515000,
                                                                              ("mem512", "zen4"))
    facts = sf.partition_facts(normal)
    assert facts["max_nodes"] == 6
    assert facts["cores_per_node"] == 128  # 2 sockets x 64 cores: physical cores, not the 256 CPUs
    assert facts["memory_per_node"] == "257000MiB"  # the smallest kind's: HPL is sized for it
    assert facts["max_time_limit_s"] == 86400
    assert facts["slurm"]["features"] == ["zen4"]  # what every node has
    assert [k["memory_per_node"] for k in facts["node_kinds"]] == ["257000MiB", "515000MiB"]
    assert facts["node_kinds"][1] == {"nodes": 2, "nodelist": "nid[001004-001005]", "cores_per_node": 128,
                                      "memory_per_node": "515000MiB", "sockets": 2, "threads_per_core": 2,
                                      "features": ["mem512", "zen4"]}
    assert "gpus" not in facts and "max_mem_per_node" not in facts  # UNLIMITED: omitted


def test_down_and_drained_nodes_are_reported_not_counted_silently(cluster):
    facts = sf.partition_facts(cluster.partitions["normal"])
    assert facts["slurm"]["node_states"] == {"allocated": 1, "down*": 1, "drained": 1, "idle": 2, "mixed": 1}
    assert facts["slurm"]["unavailable_nodes"] == "nid[001002,001005]"
    comment = sf.facts_sources(cluster, cluster.partitions["normal"], facts)
    assert "nid[001002,001005]" in comment and "2 kinds of node" in comment


def test_states_come_from_scontrol_without_sinfo():
    cluster = from_texts(sinfo=None)
    facts = sf.partition_facts(cluster.partitions["normal"])
    assert facts["slurm"]["node_states"] == {"allocated": 1, "down+not_responding": 1, "idle": 2, "idle+drain": 1, "mixed": 1}
    assert facts["slurm"]["unavailable_nodes"] == "nid[001002,001005]"
    assert "states from scontrol-node.txt" in sf.facts_sources(cluster, cluster.partitions["normal"], facts)


def test_the_constraint_selects_the_large_kind(cluster):
    facts = sf.partition_facts(cluster.partitions["normal"], "mem512")
    assert facts["max_nodes"] == 2 and facts["memory_per_node"] == "515000MiB"
    assert facts["slurm"]["nodelist"] == "nid[001004-001005]" and "node_kinds" not in facts
    assert facts["slurm"]["features"] == ["mem512", "zen4"]
    assert facts["slurm"]["unavailable_nodes"] == "nid001005"


@pytest.mark.parametrize("constraint, nodes", [
    ("mem256", 4), ("zen4&mem256", 4), ("mem256|mem512", 6), ("[mem256|mem512]", 6), ("[mem256|mem512]&zen4", 6),
    ("zen4", 6), ("mem512|h100", 2),
])
def test_constraint_expressions(cluster, constraint, nodes):
    assert sf.partition_facts(cluster.partitions["normal"], constraint)["max_nodes"] == nodes


@pytest.mark.parametrize("constraint, message", [
    ("mem512*2", "node counts"), ("(mem256|mem512)&zen4", "parentheses"), ("!mem256", "negation"),
    ("mem256&zen4|mem512", "mixes & and |"), ("[mem256*1&zen4*1]", "node counts"), ("[zen4&mem256]", "& inside"),
    ("mem256&", "without a feature"), ("", "names no feature"), ("[[a|b]]", "bracket"), ("mem 256", "spaces"),
])
def test_unsupported_constraints_are_named(constraint, message):
    with pytest.raises(InputError, match=message):
        sf.parse_constraint(constraint)


def test_a_constraint_no_node_satisfies_names_the_features(cluster):
    with pytest.raises(InputError, match=r"no node of partition normal satisfies 'mem1024'.*did you mean"):
        sf.partition_facts(cluster.partitions["normal"], "mem1024")
    with pytest.raises(InputError, match="satisfies 'mem256&mem512'"):
        sf.partition_facts(cluster.partitions["normal"], "mem256&mem512")


# --- GPUs, limits -----------------------------------------------------------------------------------

def test_gpu_partition(cluster):
    gpu = cluster.partitions["gpu"]
    assert gpu.max_mem_per_node == 500000 * MiB and gpu.max_time_s == 12 * 3600
    facts = sf.partition_facts(gpu)
    assert facts["gpus"] == {"count": 4, "type": "h100"}
    assert facts["max_mem_per_node"] == "500000MiB" and facts["cores_per_node"] == 64
    assert facts["memory_per_node"] == "515000MiB" and facts["slurm"]["features"] == ["gpu", "h100", "zen4"]


def test_debug_partition_of_thirty_minutes(cluster):
    debug = cluster.partitions["debug"]
    assert debug.max_time_s == 1800 and debug.default_time_s == 600 and debug.max_nodes_per_job == 2
    facts = sf.partition_facts(debug)
    assert facts["max_time_limit_s"] == 1800 and facts["max_nodes"] == 2 and "max_nodes_per_job" not in facts["slurm"]


@pytest.mark.parametrize("text, seconds", [
    ("UNLIMITED", None), ("INFINITE", None), ("1-00:00:00", 86400), ("12:00:00", 43200), ("30:00", 1800),
    ("2-12:30:15", 2 * 86400 + 12 * 3600 + 30 * 60 + 15),
])
def test_slurm_times(text, seconds):
    assert sf.parse_slurm_time(text, "MaxTime") == seconds


@pytest.mark.parametrize("text", ["00:00:00", "1 day", "12h", "-1", "99999-00:00:00"])
def test_impossible_times_are_named(text):
    with pytest.raises(InputError, match="MaxTime"):
        sf.parse_slurm_time(text, "MaxTime")


@pytest.mark.parametrize("text, gpus", [
    ("(null)", ()), ("gpu:4", (("", 4),)), ("gpu:h100:4(S:0-1)", (("h100", 4),)),
    ("gpu:a100:2(S:0),gpu:a100:2(S:1)", (("a100", 4),)), ("gpu:a100:2(S:0,2),nvme:1", (("a100", 2),)),
    ("gpu:v100:2,gpu:a100:2", (("a100", 2), ("v100", 2))), ("gpu:1g.10gb:7", (("1g.10gb", 7),)),
    ("shard:8", ()),
])
def test_gres(text, gpus):
    assert sf.parse_gres(text, "Gres") == gpus


def test_mixed_gpu_types_give_a_count_without_a_type():
    kind = sf.NodeKind(2, 32, 1, 515000, (("a100", 2), ("v100", 2)), (), ("g1",))
    assert kind.gpu_facts() == {"count": 4}


def test_a_partition_limited_per_job_and_per_cpu_says_so():
    given = texts()
    partition = given[sf.PARTITION_FILE].replace("PartitionName=normal", "PartitionName=normal", 1).replace(
        "MaxNodes=UNLIMITED MaxTime=1-00:00:00", "MaxNodes=4 MaxTime=1-00:00:00", 1).replace(
        "DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED", "DefMemPerCPU=1000 MaxMemPerCPU=1900", 1)
    facts = sf.partition_facts(from_texts(partition=partition).partitions["normal"])
    assert facts["max_nodes"] == 6 and facts["slurm"]["max_nodes_per_job"] == 4 and facts["slurm"]["max_mem_per_cpu"] == "1900MiB"


# --- multi-bracket host lists ---------------------------------------------------------------------

def test_multi_bracket_host_lists():
    cluster = sf.read_dir(DATA / "multi-bracket")
    blades = cluster.partitions["blades"]
    assert blades.nodes[:5] == ("c1n01", "c1n02", "c1n03", "c1n04", "c2n01")
    assert blades.nodes[-2:] == ("nid002000", "nid002001")
    facts = sf.partition_facts(blades)
    assert facts["max_nodes"] == 10 and facts["slurm"]["nodelist"] == "c[1-2]n[01-04],nid[002000-002001]"
    assert facts["cores_per_node"] == 96 and facts["slurm"]["threads_per_core"] == 1 and "node_kinds" not in facts


# --- YAML a site engineer pastes ------------------------------------------------------------------

def test_the_yaml_reads_back_as_the_facts(cluster):
    entries = [(name, sf.partition_facts(p), sf.facts_sources(cluster, p, sf.partition_facts(p)))
               for name, p in cluster.partitions.items()]
    text = sf.facts_yaml(entries, ["header"])
    assert text.startswith("# header\npartitions:\n  # normal (the default partition): ")
    assert loaders.parse_yaml(text, "facts") == {"partitions": {name: facts for name, facts, _ in entries}}
    for _, facts, _ in entries:
        assert parse_size(facts["memory_per_node"]) % MiB == 0  # a size with its binary unit, as site files have


# --- garbled, cut and impossible input --------------------------------------------------------------

def test_a_cut_output_is_named():
    node = texts()[sf.NODE_FILE]
    with pytest.raises(InputError, match=r"scontrol-node.txt line 4: the last line has no line end"):
        from_texts(node=node[:node.index("\n", node.index("\n", node.index("\n") + 1) + 1) + 400])


def test_a_record_cut_at_a_line_end_misses_its_keys():
    node = (TWO_KINDS / "multiline" / sf.NODE_FILE).read_text()
    cut = node[:node.index("   RealMemory=")]
    with pytest.raises(InputError, match=r"line 1: NodeName=nid001000 has no Sockets="):
        sf.parse_nodes(cut.rstrip("\n") + "\n", sf.NODE_FILE)


@pytest.mark.parametrize("bad, message", [
    ("RealMemory=257000", "RealMemory=257O00"),
    ("CoresPerSocket=64", "CoresPerSocket=0"),
    ("Sockets=2", "Sockets=-2"),
    ("ThreadsPerCore=2", "ThreadsPerCore=99"),
])
def test_impossible_node_values_are_named_with_their_line(bad, message):
    node = texts()[sf.NODE_FILE].replace(bad, message, 1)
    with pytest.raises(InputError, match=rf"scontrol-node.txt line 1: {message.split('=')[0]}="):
        from_texts(node=node, sinfo=None)


@pytest.mark.parametrize("line, message", [
    ("garbage here\n", r"line 1: garbage here is not a NodeName= record"),
    ("   CPUAlloc=0\n", "line 1: an indented line outside"),
    ("NodeName=n1 Arch=x86_64\n", "has no Sockets="),
    ("NodeName=n1 just words\n", "is not a node name"),
    ("", "no NodeName= record"),
])
def test_garbled_node_output(line, message):
    with pytest.raises(InputError, match=message):
        sf.parse_nodes(line, "scontrol-node.txt")


def test_garbled_partition_output_names_file_and_line():
    partition = texts()[sf.PARTITION_FILE].replace("Nodes=gpu[01-04]", "Nodes=gpu[01-", 1)
    with pytest.raises(InputError, match=r"scontrol-partition.txt line 2: Nodes"):
        from_texts(partition=partition)
    partition = texts()[sf.PARTITION_FILE].replace("MaxTime=12:00:00", "MaxTime=soon", 1)
    with pytest.raises(InputError, match=r"line 2: MaxTime: 'soon' is not a Slurm time|line 2: MaxTime"):
        from_texts(partition=partition)


def test_outputs_of_different_times_are_named():
    partition = texts()[sf.PARTITION_FILE].replace("Nodes=gpu[01-04]", "Nodes=gpu[01-05]", 1).replace(
        "TotalNodes=4 ", "TotalNodes=5 ", 1)
    with pytest.raises(InputError, match="partition gpu has node gpu05 that scontrol-node.txt does not describe"):
        from_texts(partition=partition)
    sinfo = texts()[sf.SINFO_FILE].replace("gpu04|gpu|idle|128|515000", "gpu04|gpu|idle|128|257000")
    with pytest.raises(InputError, match="sinfo.txt line 12: node gpu04 has 257000 MiB here"):
        from_texts(sinfo=sinfo)
    with pytest.raises(InputError, match="sinfo.txt line 1: .* not sinfo's --format"):
        from_texts(sinfo="nid001000 normal idle\n")


def test_a_partition_without_nodes_is_a_named_error():
    partition = texts()[sf.PARTITION_FILE].replace("Nodes=gpu[01-04]", "Nodes=(null)", 1).replace(
        "TotalNodes=4 ", "TotalNodes=0 ", 1)
    cluster = from_texts(partition=partition)
    with pytest.raises(InputError, match=r"partition gpu: no nodes \(scontrol-partition.txt line 2"):
        sf.partition_facts(cluster.partitions["gpu"])


def test_slurms_default_memory_of_one_mib_is_named():
    node = texts()[sf.NODE_FILE].replace("RealMemory=515000", "RealMemory=1")
    cluster = from_texts(node=node, sinfo=None)
    with pytest.raises(InputError, match=r"partition gpu: nodes gpu\[01-04\] have RealMemory=1 MiB"):
        sf.partition_facts(cluster.partitions["gpu"])


def test_a_key_twice_is_named_unless_in_free_text():
    record = sf.parse_records("NodeName=n1 State=IDLE Reason=NHC: State=bad disk\n", "NodeName", "f")[0]
    assert record.values["Reason"] == "NHC: State=bad disk" and record.values["State"] == "IDLE"
    with pytest.raises(InputError, match="f line 1: Sockets= twice"):
        sf.parse_records("NodeName=n1 Sockets=1 Sockets=2\n", "NodeName", "f")


def test_too_many_records_are_refused():
    with pytest.raises(InputError, match="more than 3 NodeName records"):
        sf.parse_records("".join(f"NodeName=n{i}\n" for i in range(5)), "NodeName", "f", limit=3)


def test_too_many_nodes_in_a_partition_are_refused():
    partition = texts()[sf.PARTITION_FILE].replace("Nodes=gpu[01-04]", "Nodes=gpu[0000001-9999999]", 1)
    with pytest.raises(InputError, match="more than 1000000 nodes"):
        from_texts(partition=partition)


@pytest.mark.parametrize("state, available", [
    ("IDLE", True), ("MIXED", True), ("ALLOCATED", True), ("IDLE+DRAIN", False), ("DOWN+NOT_RESPONDING", False),
    ("IDLE+CLOUD+POWERED_DOWN", True), ("idle~", True), ("down*", False), ("idle*", False), ("drained", False),
    ("draining", False), ("mixed-", True), ("FUTURE", False),
])
def test_node_availability(state, available):
    assert sf.is_available(state) is available


# --- reading saved files and running the commands --------------------------------------------------

def test_a_missing_file_says_which_command_writes_it(tmp_path):
    (tmp_path / sf.PARTITION_FILE).write_text(texts()[sf.PARTITION_FILE])
    with pytest.raises(InputError, match=r"no .*scontrol-node.txt; save it with `scontrol --all --oneliner show node"):
        sf.read_dir(tmp_path)


def test_sinfo_is_optional(tmp_path):
    for name in (sf.PARTITION_FILE, sf.NODE_FILE):
        (tmp_path / name).write_text(texts()[name])
    cluster = sf.read_dir(tmp_path)
    assert cluster.states_from == sf.NODE_FILE and sf.SINFO_FILE not in cluster.sources


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    for name in (sf.PARTITION_FILE,):
        (tmp_path / name).write_text(texts()[name])
    os.mkfifo(tmp_path / sf.NODE_FILE)
    with pytest.raises(InputError, match="not a regular file"):
        sf.read_dir(tmp_path)


def fake_slurm(tmp_path: Path, script: str) -> dict[str, str]:
    """PATH with scontrol and sinfo as shell scripts printing the saved outputs (or doing `script`)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("scontrol", "sinfo"):
        path = bin_dir / name
        path.write_text(f"#!/bin/sh\n{script}\n")
        path.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ.get('PATH', os.defpath)}", "SLURM_CONF": "/etc/slurm/test.conf"}


def test_live_runs_the_commands(tmp_path):
    saved = TWO_KINDS / "oneliner"
    env = fake_slurm(tmp_path, f'case "$*" in *partition*) cat {saved}/{sf.PARTITION_FILE};; '
                               f'*node*) cat {saved}/{sf.NODE_FILE};; *) cat {saved}/{sf.SINFO_FILE};; esac')
    cluster = sf.live(env)
    assert list(cluster.partitions) == ["normal", "gpu", "debug"]
    assert "SLURM_CONF=/etc/slurm/test.conf" in cluster.sources[sf.NODE_FILE]
    facts = sf.partition_facts(cluster.partitions["normal"])
    assert "`scontrol show node`" in sf.facts_sources(cluster, cluster.partitions["normal"], facts)


@pytest.mark.parametrize("script, message", [
    ("echo 'slurm_load_partitions: Unable to contact slurm controller' >&2; exit 1",
     r"`scontrol --all --oneliner show partition` exited 1: slurm_load_partitions: Unable to contact"),
    ("exec sleep 5", "did not answer within 0.3 s"),
    ("exec yes 'NodeName=n1'", "printed more than"),
])
def test_live_names_a_failure(tmp_path, monkeypatch, script, message):
    monkeypatch.setitem(sf.OUTPUT_LIMITS, sf.PARTITION_FILE, 2**20)
    with pytest.raises(InputError, match=message):
        sf.live(fake_slurm(tmp_path, script), timeout_s=0.3)


def test_live_names_a_missing_command(tmp_path):
    with pytest.raises(InputError, match="scontrol: not found on PATH"):
        sf.live({"PATH": str(tmp_path)})
