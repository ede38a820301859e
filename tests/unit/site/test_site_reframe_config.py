"""A site's own ReFrame configuration with its facts (scalebench.site.reframe_config, .facts): what the
configuration holds is read from it, what it cannot hold comes from the facts, and a partition without
facts is left alone, named."""
import runpy
import textwrap

import pytest

from conftest import REPO
from scalebench import paths
from scalebench.errors import InputError
from scalebench.site import facts as site_facts
from scalebench.site.reframe_config import NotDescribed, describe, not_described_error, slurm_option
from scalebench.site.siteconf import site_systems
from scalebench.check import Settings
from scalebench.hpl.case_plan import HplPlan
from scalebench.site_plan import plan_cases

CONFIGS = REPO / "tests" / "data" / "reframe_configs"


def partition(**changes):
    part = {"name": "mc", "scheduler": "slurm", "launcher": "srun", "access": ["-Cmc", "--partition=normal"],
            "environs": ["builtin", "PrgEnv-gnu"], "time_limit": "10m",
            "processor": {"arch": "zen2", "num_cpus": 256, "num_cpus_per_core": 2}}
    part.update(changes)
    return part


def system(*partitions):
    return {"name": "alpine", "partitions": list(partitions) or [partition()]}


ENVIRONMENTS = [{"name": "builtin"}, {"name": "PrgEnv-gnu", "features": ["serial", "mpi"],
                                      "env_vars": [["MPICH_GPU_SUPPORT_ENABLED", "0"]]}]


def facts(tmp_path, text):
    path = tmp_path / "alpine.yaml"
    path.write_text(textwrap.dedent(text))
    return site_facts.read_facts(path)


FACTS = """
    system: alpine
    partitions:
      mc: {max_nodes: 600, memory_per_node: 256GiB, clock_ghz: 2.25}
    environments:
      PrgEnv-gnu: {features: [hpl, mpich], hpl_binary: xhpl}
"""


def test_the_configuration_gives_cores_and_microarchitecture_the_facts_the_rest(tmp_path):
    described = describe(system(), ENVIRONMENTS, facts(tmp_path, FACTS))
    mc = described.partition("mc")
    assert (mc.cores_per_node, mc.microarch, mc.flops_per_cycle, mc.max_nodes) == (128, "zen2", 16, 600)
    assert mc.memory_per_node == 256 * 2**30 and mc.time_limit_s == 600
    assert "cores_per_node = 128 (ReFrame's processor: 256 CPUs, 2 per core)" in mc.rpeak_derivation
    assert "clock_ghz = 2.25 (facts)" in mc.rpeak_derivation
    stack = described.stacks["PrgEnv-gnu"]
    assert {"hpl", "mpich", "serial", "mpi"} <= set(stack.features)
    assert stack.extras["hpl_binary"] == "xhpl" and stack.env_vars == {"MPICH_GPU_SUPPORT_ENABLED": "0"}
    assert described.stacks_with(["hpl"]) == ["PrgEnv-gnu"]  # builtin serves no check


def test_a_partition_without_facts_is_left_alone_and_named(tmp_path):
    login = {"name": "login", "scheduler": "local", "launcher": "local", "environs": ["builtin"]}
    described = describe(system(login, partition()), ENVIRONMENTS, facts(tmp_path, FACTS))
    assert [p.name for p in described.partitions] == ["mc"]
    assert described.not_described == {"login": "no facts"}


def test_each_missing_fact_is_one_line_saying_where_to_find_it(tmp_path):
    given = facts(tmp_path, """
        system: alpine
        partitions:
          mc: {clock_ghz: 2.25}
    """)
    with pytest.raises(InputError) as err:
        describe(system(partition(processor={})), ENVIRONMENTS, given)
    assert str(err.value).startswith("system alpine: partition mc lacks what no ReFrame configuration holds: "
                                     "max_nodes, memory_per_node, cores_per_node, microarch; give them in ")
    lines = err.value.details
    assert [line.split(":")[0] for line in lines] == ["max_nodes", "memory_per_node", "cores_per_node", "microarch"]
    assert "sinfo -p normal -h -o %D" in lines[0]  # the Slurm partition its access options name


def test_facts_in_the_configurations_extras_count_as_facts_but_only_once(tmp_path):
    inline = partition(extras={"scalebench": {"max_nodes": 8, "memory_per_node": "256GiB", "clock_ghz": 2.25}})
    described = describe(system(inline), [{"name": "builtin"}, {"name": "PrgEnv-gnu",
                                           "extras": {"scalebench": {"features": ["hpl"]}}}])
    assert described.partition("mc").max_nodes == 8 and described.stacks_with(["hpl"]) == ["PrgEnv-gnu"]
    with pytest.raises(InputError, match="max_nodes, memory_per_node also given in its extras.scalebench"):
        describe(system(inline), ENVIRONMENTS, facts(tmp_path, FACTS))


@pytest.mark.parametrize("text, message", [
    ("mc: {max_nodes: 8, access: ['-p x']}", "'access' is the ReFrame configuration's"),
    ("mc: {max_nodes: 8, memory_per_node: '256'}", "memory_per_node: '256' has no unit"),
    ("mc: {max_nodes: 0}", "max_nodes: must be a positive whole number"),
    ("mc: {max_node: 8}", r"unknown key 'max_node' \(did you mean 'max_nodes'\?\)"),
])
def test_wrong_facts_are_named_in_the_facts_file(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        facts(tmp_path, f"system: alpine\npartitions:\n  {text}\n")


def test_a_launcher_scalebench_cannot_bind_for_is_named(tmp_path):
    with pytest.raises(InputError, match="launcher 'ibrun': scalebench plans jobs for the launchers srun"):
        describe(system(partition(launcher="ibrun")), ENVIRONMENTS, facts(tmp_path, FACTS))


def test_a_system_without_facts_says_what_to_pass():
    described = describe(system(), ENVIRONMENTS, None)
    assert not described.partitions
    assert "set SCALEBENCH_FACTS" in not_described_error("alpine", described, False, [])
    assert "pass --system" in not_described_error("generic", described, False, [])
    assert "the facts describe other" in not_described_error("alpine", described, True, ["other"])
    assert issubclass(NotDescribed, InputError)


def test_facts_files_by_variable_file_or_directory(tmp_path, monkeypatch):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.yaml").write_text("system: alpine\n")
    (tmp_path / "d" / "b.yaml").write_text("system: beta\n")
    monkeypatch.setenv("PWD", str(tmp_path))  # ReFrame imports checks elsewhere: relative is the shell's
    assert site_facts.system_facts("beta", "d").source.endswith("b.yaml")
    assert site_facts.system_facts("gamma", "d") is None
    (tmp_path / "twice.yaml").write_text("system: alpine\n")
    with pytest.raises(InputError, match="system alpine is described twice"):
        site_facts.system_facts("alpine", f"d:{tmp_path / 'twice.yaml'}")
    with pytest.raises(InputError, match="nowhere.yaml does not exist"):
        site_facts.system_facts("alpine", "nowhere.yaml")


@pytest.mark.parametrize("access, found", [
    (["--partition=normal"], "normal"), (["-p normal"], "normal"), (["-pnormal"], "normal"),
    (["--partition", "gpu"], "gpu"), (["-Cmc", "--account=x"], None), (["-p a", "--partition=b"], "b"),
])
def test_the_slurm_partition_of_access_options(access, found):
    assert slurm_option(access, "partition", "p") == found


def test_one_system_two_ways_plans_the_same_jobs():
    """The zen4-ib archetype as a site file, and as a ReFrame configuration with its facts."""
    yaml_config = site_systems(paths.SITE_CONFIGS / "sites" / "archetypes" / "zen4-ib.yaml")
    own = describe(yaml_config["systems"][0], yaml_config["environments"])
    config = runpy.run_path(str(CONFIGS / "zen4ib.py"))["site_configuration"]
    by_facts = describe(config["systems"][0], config["environments"],
                        site_facts.read_facts(CONFIGS / "zen4ib.facts.yaml"))

    def jobs(described):
        cases = plan_cases(list(described.partitions), dict(described.stacks),
                           {k: list(v) for k, v in described.environs.items()}, Settings())
        return [(c.display_name, c.stack.name, c.plan.job.to_json() if c.plan and c.plan.job else c.left_out,
                 c.plan.detail.input_file() if c.plan and isinstance(c.plan.detail, HplPlan) else None) for c in cases]

    assert jobs(by_facts) == jobs(own) and len(jobs(own)) > 100


TWO_KINDS = REPO / "tests" / "data" / "slurm" / "two-kinds" / "multiline"


def test_a_facts_template_holds_what_slurm_knows_and_names_the_rest(tmp_path, capsys):
    """`facts template` on a configuration whose partitions are Slurm's normal and gpu: what Slurm knows is
    filled in, and the file loads as it is, naming what no one but the site knows."""
    from scalebench.cli import main

    config = tmp_path / "site.py"
    config.write_text(textwrap.dedent("""
        site_configuration = {
            'systems': [{'name': 'tk', 'hostnames': ['tk-login.invalid'], 'partitions': [
                {'name': 'login', 'scheduler': 'local', 'launcher': 'local', 'environs': ['gnu']},
                {'name': 'cpu', 'scheduler': 'slurm', 'launcher': 'srun', 'access': ['--partition=normal'],
                 'environs': ['gnu'], 'processor': {'arch': 'zen4', 'num_cpus': 128}},
                {'name': 'big', 'scheduler': 'slurm', 'launcher': 'srun', 'access': ['-p normal', '-C mem512'],
                 'environs': ['gnu']}]}],
            'environments': [{'name': 'gnu', 'features': ['mpi']}],
        }
    """))
    assert main(["facts", "template", str(config), "--system", "tk", "--slurm-from", str(TWO_KINDS)]) == 0
    text = capsys.readouterr().out
    facts_file = tmp_path / "tk.yaml"
    facts_file.write_text(text)
    read = site_facts.read_facts(facts_file)
    assert "login" not in read.partitions  # a login node's local launcher: no MPI job there
    cpu, big = read.partitions["cpu"], read.partitions["big"]
    assert (cpu["max_nodes"], cpu["memory_per_node"], len(cpu["node_kinds"])) == (6, "257000MiB", 2)
    assert "cores_per_node" not in cpu  # the configuration's processor says it
    assert (big["max_nodes"], big["memory_per_node"], big["cores_per_node"]) == (2, "515000MiB", 128)
    assert "# clock_ghz:" in text and "# features: [hpl]" in text
    assert main(["plan", str(config), "--system", "tk", "--facts", str(facts_file)]) == 2
    err = capsys.readouterr().err
    assert "partition cpu lacks what no ReFrame configuration holds: clock_ghz;" in err
    assert "\n  clock_ghz: the nominal (base) clock" in err
