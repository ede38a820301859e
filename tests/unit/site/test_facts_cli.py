"""`scalebench facts slurm`: YAML (or JSON) of the partitions Slurm's saved outputs describe
(tests/data/slurm/); bad input is one line and exit 2."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_calls import cli, one_error_line
from scalebench import loaders
from scalebench.site import slurm_facts as sf

TWO_KINDS = Path(__file__).resolve().parents[2] / "data" / "slurm" / "two-kinds"


def test_cli_prints_yaml_of_every_partition(capsys):
    status, out, err = cli(capsys, "facts", "slurm", "--from", str(TWO_KINDS / "multiline"))
    assert status == 0 and err == ""
    document = loaders.parse_yaml(out, "stdout")
    assert list(document["partitions"]) == ["normal", "gpu", "debug"]
    assert document["partitions"]["normal"]["memory_per_node"] == "257000MiB"
    assert out.count("\n  # ") == 3  # a comment line per partition


def test_cli_json_with_partition_and_constraint(capsys):
    status, out, _ = cli(capsys, "facts", "slurm", "--from", str(TWO_KINDS / "oneliner"), "--partition", "normal",
                         "--constraint", "mem512", "--json")
    assert status == 0
    document = json.loads(out)
    assert list(document["partitions"]) == ["normal"]
    assert document["partitions"]["normal"]["memory_per_node"] == "515000MiB"
    assert "--constraint=mem512" in document["sources"]["normal"]


@pytest.mark.parametrize("args, message", [
    (["--partition", "nomral"],
     r"no partition 'nomral' in .*\(partitions: normal, gpu, debug\) \(did you mean 'normal'\?\)"),
    (["--constraint", "mem1024"], "no node of any partition satisfies 'mem1024'"),
    (["--constraint", "a*2"], "node counts"),
])
def test_cli_bad_input_is_one_line_and_exit_2(capsys, args, message):
    status, _, err = cli(capsys, "facts", "slurm", "--from", str(TWO_KINDS / "oneliner"), *args)
    assert status == 2
    assert re.search(message, one_error_line(err))


def test_cli_names_the_garbled_file_and_line(capsys, tmp_path):
    for name in sf.COMMANDS:
        text = (TWO_KINDS / "oneliner" / name).read_text()
        (tmp_path / name).write_text(text.replace("ThreadsPerCore=2", "ThreadsPerCore=two", 1))
    status, _, err = cli(capsys, "facts", "slurm", "--from", str(tmp_path))
    assert status == 2
    assert one_error_line(err) == (f"scalebench facts: error: {tmp_path / sf.NODE_FILE} line 1: ThreadsPerCore=two "
                                   "is not a whole number from 1 to 16")


def test_cli_leaves_out_a_partition_without_nodes_and_says_so(capsys, tmp_path):
    for name in sf.COMMANDS:
        text = (TWO_KINDS / "oneliner" / name).read_text()
        if name == sf.PARTITION_FILE:
            text = text.replace("Nodes=gpu[01-04]", "Nodes=(null)").replace("TotalNodes=4 ", "TotalNodes=0 ")
        (tmp_path / name).write_text(text)
    status, out, err = cli(capsys, "facts", "slurm", "--from", str(tmp_path))
    assert status == 0 and list(loaders.parse_yaml(out, "stdout")["partitions"]) == ["normal", "debug"]
    assert err.startswith("note: gpu: left out: partition gpu: no nodes")
    status, _, err = cli(capsys, "facts", "slurm", "--from", str(tmp_path), "--partition", "gpu")
    assert status == 2 and "partition gpu: no nodes" in one_error_line(err)


def test_cli_help_names_the_commands_that_save_the_files(capsys):
    status, out, _ = cli(capsys, "facts", "slurm", "--help")
    assert status == 0
    flat = " ".join(out.split())
    for name in sf.COMMANDS:
        assert f"DIR/{name} (" in flat
    for command in ("(scontrol --all --oneliner show partition)", "(scontrol --all --oneliner show node)",
                    "(sinfo --all --noheader --Node --format='%N|%P|%T|%c|%m|%G|%f')"):
        assert command in flat


def test_cli_from_a_missing_directory(capsys, tmp_path):
    status, _, err = cli(capsys, "facts", "slurm", "--from", str(tmp_path / "nothere"))
    assert status == 2 and one_error_line(err).endswith("nothere is not a directory")
