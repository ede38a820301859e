"""The fabric rules of `scalebench spack validate`: a stack is what its name and its site's fabric
say. Each rule fires on a broken copy of spack_envs/ and stays quiet on the shipped one. No Spack."""
import shutil
from pathlib import Path

import pytest
import yaml

from scalebench.errors import InputError
from scalebench.spack import load_table, validate_env, validate_tree
from scalebench.spack.fabric_rules import SITE_FILE, FabricRules, load_rules
from scalebench.spack.validate import find_envs

REPO = Path(__file__).resolve().parents[3]
SPACK_ENVS = REPO / "spack_envs"
SITES = SPACK_ENVS / "sites"
UCX_VERBS = "+verbs +rc +dc +ud +mlx5_dv +thread_multiple"


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "spack_envs"
    shutil.copytree(SPACK_ENVS, root, ignore=shutil.ignore_patterns(".spack-env", "spack.lock"))
    return root


def edit(path: Path, old: str, new: str) -> Path:
    """Replace one exact piece of a shipped file (it must be there: the test breaks what it names)."""
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} not once in {path}"
    path.write_text(text.replace(old, new))
    return path


def messages(findings, file=None, key=None):
    return [f.message for f in findings if (file is None or f.file == str(file)) and (key is None or f.key == key)]


# -- the shipped environments and the data -----------------------------------------------------


def test_shipped_sites_declare_every_fabric_class():
    rules = load_rules()
    declared = {}
    for site in sorted(p for p in SITES.iterdir() if p.is_dir()):
        data = yaml.safe_load((site / SITE_FILE).read_text())
        assert set(data) == {"fabric", "scheduler"}, site
        assert data["fabric"] in rules.fabrics and data["scheduler"] in rules.schedulers, site
        declared[site.name] = data["fabric"]
    assert set(declared.values()) == set(rules.fabrics) == {"infiniband", "roce", "efa", "slingshot", "ethernet"}
    assert declared["debian12-local"] == "ethernet"


def test_rules_cover_every_shipped_stack_and_nothing_else():
    rules = load_rules()
    stacks = {p.parent.name: rules.stack(p.parent.name) for p in find_envs(SPACK_ENVS)}
    assert stacks.pop("site-mpi") is None
    assert stacks == {f"{mpi}-{t}": (mpi, t) for mpi in ("openmpi", "mpich") for t in ("ucx", "ofi", "tcp")}


def test_the_issue_facts_are_in_the_rules():
    rules = load_rules()
    texts = lambda rs: [r.text for r in rs]  # noqa: E731
    assert texts(rules.fabrics["infiniband"]["ucx"]) == [f"ucx {UCX_VERBS}"]
    assert rules.fabrics["roce"] == rules.fabrics["infiniband"]
    assert texts(rules.fabrics["efa"]["ofi"]) == ["libfabric fabrics=efa"]
    assert texts(rules.fabrics["slingshot"]["ofi"]) == ["libfabric fabrics=cxi"]
    assert rules.external["slingshot"] == ["libfabric"]
    assert "ucx" not in rules.fabrics["efa"] and "ucx" not in rules.fabrics["slingshot"]
    assert "ucx +thread_multiple" in texts(rules.transports["ucx"]["openmpi"])
    assert texts(rules.transports["tcp"]["openmpi"]) == ["openmpi fabrics=none"]


def test_shipped_stacks_request_the_fabric_and_pins():
    for stack in ("openmpi-ucx", "mpich-ucx"):
        env = yaml.safe_load((SPACK_ENVS / stack / "spack.yaml").read_text())["spack"]
        assert env["definitions"][0]["mpi"][0].endswith(f"^ucx {UCX_VERBS}"), stack
    pins = yaml.safe_load((SPACK_ENVS / "common" / "pins.yaml").read_text())["packages"]
    assert {name: entry["require"] for name, entry in pins.items() if name not in ("openmpi", "mpich")} == {
        "hpl": ["@2.3"], "lammps": ["@20250722"], "openfoam": ["@2412"], "osu-micro-benchmarks": ["@7.5"],
        "gromacs": ["@2025.3"]}
    # Built MPIs only: a site's external MPI (site-mpi) keeps its version.
    assert pins["openmpi"]["require"] == [{"spec": "@5.0", "when": "%c"}]
    assert pins["mpich"]["require"] == [{"spec": "@4.3", "when": "%c"}]
    for env in find_envs(SPACK_ENVS):
        includes = yaml.safe_load(env.read_text())["spack"]["include"]
        assert {"path": "../common/pins.yaml",
                "when": 'env.get("SCALEBENCH_SPACK_PINS", "pinned") != "floating"'} in includes, env


def test_rules_data_is_checked_against_the_package_table(tmp_path):
    data = yaml.safe_load((REPO / "scalebench" / "data" / "spack_fabrics.yaml").read_text())
    FabricRules(data, load_table())  # the shipped data loads
    data["fabrics"]["efa"]["require"]["ofi"] = ["libfabric fabrics=efaa"]
    with pytest.raises(InputError, match=r"fabrics.efa.require.ofi\[0\] 'libfabric fabrics=efaa': 'efaa' is not a "
                                         r"value of libfabric variant 'fabrics'"):
        FabricRules(data, load_table())
    data["fabrics"]["efa"]["require"] = {"psm": []}
    with pytest.raises(InputError, match="fabrics.efa.require.psm: not a transport"):
        FabricRules(data, load_table())


# -- each rule fires on a broken copy ------------------------------------------------------------


def test_ucx_stack_without_verbs_on_a_roce_site(tree):
    """The issue's case: Spack's default UCX has no InfiniBand transports."""
    env = edit(tree / "openmpi-ucx" / "spack.yaml", f" ^ucx {UCX_VERBS}]", "]")
    findings = validate_tree(tree)
    found = messages(findings, env, "spack.specs")
    assert ("openmpi-ucx on site example-roce (roce): ucx lacks +verbs +rc +dc +ud +mlx5_dv +thread_multiple "
            "(has ~verbs ~rc ~dc ~ud ~mlx5_dv ~thread_multiple): request it in the stack's specs or require it "
            "in sites/example-roce/packages.yaml") in found
    # Open MPI needs a thread-safe UCX on every site: the name's rule, once for the sites that build UCX.
    assert found.count("openmpi-ucx: ucx lacks +thread_multiple (has ~thread_multiple): the name says ucx with "
                       "SCALEBENCH_SPACK_SITE=debian12-local,example-aws-efa,example-cray-ex,example-roce") == 1
    # MOFED's UCX is an external that has them; Ethernet asks nothing more of UCX.
    assert not [m for m in found if "on site example-ib-mofed" in m or "on site debian12-local" in m]
    assert {f.file for f in findings} == {str(env)}


def test_mofed_ucx_external_without_its_transports(tree):
    site = edit(tree / "sites" / "example-ib-mofed" / "packages.yaml",
                f"ucx@1.17.0 {UCX_VERBS} +ib_hw_tm", "ucx@1.17.0 +thread_multiple +ib_hw_tm")
    findings = validate_tree(tree)
    assert messages(findings) == messages(findings, site, "packages.ucx.externals[0].spec") == [
        "site example-ib-mofed (infiniband): ucx external lacks +verbs +rc +dc +ud +mlx5_dv "
        "(has ~verbs ~rc ~dc ~ud ~mlx5_dv); needed by ucx stacks"]


def test_ofi_stack_with_default_libfabric_on_a_fabric_site(tree):
    edit(tree / "sites" / "example-ib-mofed" / "packages.yaml", "    - fabrics=verbs,rxm,shm,tcp\n",
         "    - fabrics=tcp,shm\n")
    findings = validate_tree(tree)
    for stack in ("openmpi-ofi", "mpich-ofi"):
        assert messages(findings, tree / stack / "spack.yaml", "spack.specs") == [
            f"{stack} on site example-ib-mofed (infiniband): libfabric lacks fabrics=verbs,rxm "
            "(has fabrics=tcp,shm,sockets,udp): request it in the stack's specs or require it in "
            "sites/example-ib-mofed/packages.yaml"]
    assert len(findings) == 2


def test_efa_libfabric_external_without_efa(tree):
    site = edit(tree / "sites" / "example-aws-efa" / "packages.yaml", "fabrics=efa,shm,", "fabrics=shm,")
    findings = validate_tree(tree)
    assert messages(findings) == messages(findings, site, "packages.libfabric.externals[0].spec") == [
        "site example-aws-efa (efa): libfabric external lacks fabrics=efa "
        "(has fabrics=shm,tcp,udp,sockets,rxm,rxd); needed by ofi stacks"]


def test_slingshot_libfabric_must_be_the_sites(tree):
    edit(tree / "sites" / "example-cray-ex" / "packages.yaml",
         "      prefix: /opt/cray/libfabric/1.20.1\n    buildable: false\n",
         "      prefix: /opt/cray/libfabric/1.20.1\n")
    findings = validate_tree(tree)
    for stack in ("openmpi-ofi", "mpich-ofi"):
        assert messages(findings, tree / stack / "spack.yaml") == [
            f"{stack} on site example-cray-ex (slingshot): libfabric lacks fabrics=cxi (has fabrics=sockets,tcp,udp): "
            "request it in the stack's specs or require it in sites/example-cray-ex/packages.yaml",
            f"{stack} on site example-cray-ex (slingshot): libfabric must be the site's own: an external with "
            "buildable: false, never built"]
    assert len(findings) == 4


@pytest.mark.parametrize("stack,old,new,message", [
    ("openmpi-ucx", "openmpi fabrics=ucx ^", "openmpi fabrics=ofi ^",
     "openmpi-ucx: openmpi lacks fabrics=ucx (has fabrics=ofi): the name says ucx"),
    ("openmpi-ucx", "openmpi fabrics=ucx ^", "openmpi ^",
     "openmpi-ucx: openmpi lacks fabrics=ucx (has fabrics=none): the name says ucx"),
    ("openmpi-tcp", "openmpi fabrics=none]", "openmpi fabrics=ucx]",
     "openmpi-tcp: openmpi lacks fabrics=none (has fabrics=ucx): the name says tcp"),
    ("mpich-ucx", "mpich device=ch4 netmod=ucx", "mpich device=ch4 netmod=ofi",
     "mpich-ucx: mpich lacks netmod=ucx (has netmod=ofi): the name says ucx"),
    ("mpich-tcp", "mpich device=ch3 netmod=tcp]", "mpich device=ch3:sock]",
     "mpich-tcp: mpich lacks device=ch3 netmod=tcp (has device=ch3:sock netmod=ofi): the name says tcp"),
    ("mpich-ofi", "mpich device=ch4 netmod=ofi]", "openmpi fabrics=ofi]",
     "mpich-ofi: no mpich in its specs: the name says mpich over ofi"),
])
def test_name_disagreeing_with_the_variants(tree, stack, old, new, message):
    env = edit(tree / stack / "spack.yaml", old, new)
    findings = validate_tree(tree)
    assert messages(findings, env, "spack.specs") == [message], "\n".join(map(str, findings))
    assert {f.file for f in findings} == {str(env)}


def test_site_requirement_breaking_a_name_rule_names_the_site(tree):
    edit(tree / "sites" / "debian12-local" / "packages.yaml", "  openmpi:\n",
         "  ucx:\n    require:\n    - ~thread_multiple\n  openmpi:\n")
    findings = validate_tree(tree)
    assert messages(findings) == [
        "openmpi-ucx: ucx lacks +thread_multiple (has +thread_multiple ~thread_multiple): the name says ucx "
        "with SCALEBENCH_SPACK_SITE=debian12-local"]


def test_slurm_site_needs_slurm_support_and_pmix(tree):
    edit(tree / "sites" / "example-roce" / "packages.yaml", "  mpich:\n    require:\n    - +slurm\n", "")
    site = edit(tree / "sites" / "example-roce" / "packages.yaml", "slurm@21-08-5-1 +pmix", "slurm@21-08-5-1")
    findings = validate_tree(tree)
    for stack in ("mpich-ofi", "mpich-tcp", "mpich-ucx"):
        assert messages(findings, tree / stack / "spack.yaml") == [
            f"{stack} on site example-roce (scheduler slurm): mpich lacks +slurm (has ~slurm): request it in the "
            "stack's specs or require it in sites/example-roce/packages.yaml"]
    assert messages(findings, site, "packages.slurm.externals[0].spec") == [
        "site example-roce (scheduler slurm): slurm external lacks +pmix (has ~pmix); needed by every stack"]
    assert len(findings) == 4  # Open MPI stacks: only the Slurm external, reported once


def test_what_counts_as_requested(tree):
    """one_of guarantees nothing; multi-valued requests add up, with the default values (Spack keeps
    them: fabrics=verbs builds verbs,sockets,tcp,udp, which Ethernet's tcp rule accepts); `require` in
    the stack counts."""
    site = tree / "sites" / "example-roce" / "packages.yaml"
    edit(site, "    - fabrics=verbs,rxm,shm,tcp\n", "    - one_of: [fabrics=verbs, fabrics=tcp]\n")
    assert "libfabric lacks fabrics=verbs,rxm (has fabrics=sockets,tcp,udp)" in " ".join(messages(validate_tree(tree)))
    edit(site, "    - one_of: [fabrics=verbs, fabrics=tcp]\n", "    - fabrics=rxm\n")
    edit(tree / "mpich-ofi" / "spack.yaml", "[mpich device=ch4 netmod=ofi]",
         "[mpich device=ch4 netmod=ofi ^libfabric fabrics=verbs]")
    assert messages(validate_tree(tree)) == [
        "openmpi-ofi on site example-roce (roce): libfabric lacks fabrics=verbs,rxm (has fabrics=rxm,sockets,tcp,udp): "
        "request it "
        "in the stack's specs or require it in sites/example-roce/packages.yaml"]
    edit(tree / "openmpi-ofi" / "spack.yaml", "  specs:\n",
         "  packages:\n    libfabric:\n      require: ['fabrics=verbs']\n  specs:\n")
    assert validate_tree(tree) == []


def test_unnamed_envs_claim_nothing(tree):
    """An environment not named <mpi>-<transport> (site-mpi, an experiment) is not checked here."""
    (tree / "my-crossed").mkdir()
    (tree / "my-crossed" / "spack.yaml").write_text((tree / "openmpi-ucx" / "spack.yaml").read_text().replace(
        "openmpi fabrics=ucx", "openmpi fabrics=ofi"))
    assert validate_tree(tree) == []
    assert validate_env(tree / "mpich-tcp") == []


@pytest.mark.parametrize("text,key,fragment", [
    (None, "<file>", "missing: every site declares its fabric class and scheduler"),
    ("fabric: infiniband\n", "scheduler", "missing: one of slurm, none"),
    ("fabric: omnipath\nscheduler: slurm\n", "fabric", "unknown fabric 'omnipath': one of infiniband, roce"),
    ("fabric: ethernet\nscheduler: slurm\nfabrics: x\n", "fabrics", "unknown key 'fabrics' in site.yaml"),
    ("- ethernet\n", "<root>", "a mapping of fabric, scheduler"),
])
def test_site_declaration_is_checked(tree, text, key, fragment):
    path = tree / "sites" / "example-roce" / SITE_FILE
    if text is None:
        path.unlink()
    else:
        path.write_text(text)
    findings = validate_tree(tree)
    assert any(fragment in m for m in messages(findings, path, key)), "\n".join(map(str, findings))
    assert messages(findings, path, key) == messages(validate_env(tree / "openmpi-ucx"), path, key)
