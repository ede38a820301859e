"""The offline validator of spack_envs/: every shipped env passes; broken envs are rejected with
messages naming the file and the YAML key. No Spack needed."""
import argparse
import shutil
from pathlib import Path

import pytest
import yaml

from scalebench.cli.spack import add_arguments, cmd_spack_validate
from scalebench.errors import InputError
from scalebench.spack import Finding, load_table, validate_env, validate_tree
from scalebench.spack.specs import SpecSyntaxError, check_node, parse_spec
from scalebench.spack.validate import find_envs

REPO = Path(__file__).resolve().parents[3]
SPACK_ENVS = REPO / "spack_envs"
UCX_VERBS = "^ucx +verbs +rc +dc +ud +mlx5_dv +thread_multiple"
STACKS = {
    "openmpi-ucx": f"openmpi fabrics=ucx {UCX_VERBS}",
    "openmpi-ofi": "openmpi fabrics=ofi",
    "openmpi-tcp": "openmpi fabrics=none",
    "mpich-ofi": "mpich device=ch4 netmod=ofi",
    "mpich-ucx": f"mpich device=ch4 netmod=ucx {UCX_VERBS}",
    "mpich-tcp": "mpich device=ch3 netmod=tcp",
}
# A stack env as shipped, for the broken variants below.
STACK_ENV = """\
spack:
  include:
  - ../common/apps.yaml
  - ../sites/$SCALEBENCH_SPACK_SITE
  definitions:
  - mpi: [{mpi}]
  specs:
  - matrix:
    - [$apps]
    - [{ref}]
  concretizer:
    unify: {unify}
"""


def stack_env(mpi="openmpi fabrics=ucx", ref="$^mpi", unify="true"):
    return STACK_ENV.format(mpi=mpi, ref=ref, unify=unify)


# -- the shipped environments ------------------------------------------------------------------


def test_every_shipped_env_passes_the_validator():
    findings = validate_tree(SPACK_ENVS)
    assert findings == [], "\n".join(map(str, findings))


@pytest.mark.parametrize("env", find_envs(SPACK_ENVS), ids=lambda p: p.parent.name)
def test_each_shipped_env_passes_alone(env):
    findings = validate_env(env)
    assert findings == [], "\n".join(map(str, findings))


def test_shipped_layout_has_every_stack_and_two_sites():
    names = {p.parent.name for p in find_envs(SPACK_ENVS)}
    assert set(STACKS) | {"site-mpi"} <= names
    for stack, mpi in STACKS.items():
        env = yaml.safe_load((SPACK_ENVS / stack / "spack.yaml").read_text())["spack"]
        assert env["definitions"] == [{"mpi": [mpi]}], stack
        assert env["specs"] == [{"matrix": [["$apps"], ["$^mpi"]]}], stack
        assert env["concretizer"]["unify"] is True, f"{stack}: one MPI per env, one view"
    sites = sorted(p.name for p in (SPACK_ENVS / "sites").iterdir() if p.is_dir())
    assert "debian12-local" in sites and len(sites) >= 2
    for site in sites:
        site_mpi = yaml.safe_load((SPACK_ENVS / "sites" / site / "site-mpi.yaml").read_text())
        assert [d for d in site_mpi["definitions"] if "site_mpi" in d], site
        externals = {name: s for name, s in site_mpi["packages"].items() if s.get("externals")}
        assert any(s.get("buildable") is False for s in externals.values()), site


def test_apps_are_hybrid_hpl_lammps_openfoam_osu_and_mpi_gromacs():
    apps = yaml.safe_load((SPACK_ENVS / "common" / "apps.yaml").read_text())["definitions"][0]["apps"]
    roots = [parse_spec(spec)[0].name for spec in apps]
    assert roots == ["hpl", "lammps", "openfoam", "osu-micro-benchmarks", "gromacs"]
    assert parse_spec(apps[-1])[0].variants == {"mpi": ("true",)}  # gmx_mpi: ranks the launcher starts
    hpl = parse_spec(apps[0])
    assert hpl[0].variants["openmp"] == ("true",)
    assert [(n.name, n.variants) for n in hpl[1:]] == [("openblas", {"threads": ("openmp",)})]


def test_debian_site_declares_gcc_12_2_as_external_compiler():
    packages = yaml.safe_load((SPACK_ENVS / "sites" / "debian12-local" / "packages.yaml").read_text())
    gcc = packages["packages"]["gcc"]
    assert gcc["buildable"] is False
    assert gcc["externals"][0]["spec"].startswith("gcc@12.2.0 ")
    assert set(gcc["externals"][0]["extra_attributes"]["compilers"]) == {"c", "cxx", "fortran"}


# -- broken environments ------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path):
    """A copy of the shipped spack_envs/ to add broken environments to."""
    root = tmp_path / "spack_envs"
    shutil.copytree(SPACK_ENVS, root, ignore=shutil.ignore_patterns(".spack-env", "spack.lock"))
    return root


def write_env(tree, name, text):
    env = tree / name
    env.mkdir()
    (env / "spack.yaml").write_text(text)
    return env / "spack.yaml"


BROKEN = [
    # (id, spack.yaml text, key, message fragment)
    ("wrong-package", stack_env(mpi="openmpy fabrics=ucx"),
     "spack.definitions[0].mpi[0]", "unknown package 'openmpy' (did you mean 'openmpi'?)"),
    ("wrong-package-in-specs", "spack:\n  include: [../sites/$SCALEBENCH_SPACK_SITE]\n"
                               "  specs: [hpll ^openmpi]\n",
     "spack.specs[0]", "unknown package 'hpll' (did you mean 'hpl'?)"),
    ("wrong-dependency", stack_env(mpi="openmpi fabrics=ucx ^ucxx"),
     "spack.definitions[0].mpi[0]", "unknown package 'ucxx'"),
    ("fabrics-infiniband", stack_env(mpi="openmpi fabrics=infiniband"),
     "spack.definitions[0].mpi[0]", "'infiniband' is not a value of openmpi variant 'fabrics'; allowed: "),
    ("netmod-psm9", stack_env(mpi="mpich device=ch4 netmod=psm9"),
     "spack.definitions[0].mpi[0]", "'psm9' is not a value of mpich variant 'netmod'; allowed: mxm, ofi, tcp, ucx"),
    ("device-ch5", stack_env(mpi="mpich device=ch5"),
     "spack.definitions[0].mpi[0]", "'ch5' is not a value of mpich variant 'device'"),
    ("unknown-variant", stack_env(mpi="openmpi fabric=ucx"),
     "spack.definitions[0].mpi[0]", "openmpi has no variant 'fabric' (did you mean 'fabrics'?)"),
    ("ch4-tcp-conflict", stack_env(mpi="mpich device=ch4 netmod=tcp"),
     "spack.definitions[0].mpi[0]", "'device=ch4 netmod=tcp' conflict: MPICH's ch4 device has no tcp netmod"),
    ("ch3-ucx-conflict", stack_env(mpi="mpich device=ch3 netmod=ucx"),
     "spack.definitions[0].mpi[0]", "'device=ch3 netmod=ucx' conflict"),
    ("none-combined", stack_env(mpi="'openmpi fabrics=none,ucx'"),
     "spack.definitions[0].mpi[0]", "'none' cannot be combined with other values"),
    ("bool-given-value", stack_env(mpi="openmpi fortran=yes"),
     "spack.definitions[0].mpi[0]", "openmpi variant 'fortran' is boolean: use +fortran or ~fortran"),
    ("value-given-bool", stack_env(mpi="openmpi +fabrics"),
     "spack.definitions[0].mpi[0]", "openmpi variant 'fabrics' is not boolean"),
    ("variant-on-virtual", stack_env(mpi="mpi fabrics=ucx"),
     "spack.definitions[0].mpi[0]", "'mpi' is a virtual package: it has no variants"),
    ("two-names", stack_env(mpi="openmpi mpich"),
     "spack.definitions[0].mpi[0]", "two package names ('openmpi', 'mpich') in one spec"),
    ("undefined-matrix-name", stack_env(ref="$undefined"),
     "spack.specs[0].matrix[1][0]", "'$undefined' is not defined (defined: apps, mpi)"),
    ("undefined-in-definition", stack_env().replace("  - mpi: [openmpi fabrics=ucx]\n",
                                                    "  - mpi: [openmpi fabrics=ucx]\n  - stacks: [$mpis]\n"),
     "spack.definitions[1].stacks[0]", "'$mpis' is not defined (defined: mpi)"),
    ("bad-yaml", "spack:\n  specs: [hpl\n", "<yaml>", "line 3 not valid YAML"),
    ("tab-yaml", "spack:\n\tspecs: [hpl]\n", "<yaml>", "line 2 not valid YAML"),
    ("repeated-key", stack_env() + "  specs: [hpl]\n", "<yaml>", "key 'specs' is repeated"),
    ("missing-spack-root", "specs: [hpl]\n", "spack", "missing the top-level `spack:` mapping"),
    ("empty-file", "", "spack", "missing the top-level `spack:` mapping"),
    ("unify-true-crossed", stack_env(mpi="openmpi fabrics=ucx, mpich device=ch4 netmod=ucx"),
     "spack.concretizer.unify", "unify: true across 2 MPI stacks (mpich device=ch4 netmod=ucx, "
                                "openmpi fabrics=ucx)"),
    ("unify-default-crossed", stack_env(mpi="openmpi fabrics=ucx, mpich").replace(
        "  concretizer:\n    unify: true\n", ""),
     "spack.concretizer.unify", "unify: true (the default) across 2 MPI stacks"),
    ("unknown-env-key", stack_env().replace("  specs:", "  spec:"),
     "spack.spec", "unknown key 'spec' in spack: (did you mean 'specs'?)"),
    ("no-specs", "spack:\n  include: [../sites/$SCALEBENCH_SPACK_SITE]\n", "spack.specs", "no specs"),
    ("bad-unify", stack_env(unify="maybe"), "spack.concretizer.unify", "must be true, false or when_possible"),
    ("externals-in-shared-env", stack_env() + "  packages:\n    openmpi:\n      externals:\n"
                                              "      - {spec: openmpi@4.1.4, prefix: /usr}\n",
     "spack.packages.openmpi.externals", "externals are site-specific"),
    ("target-in-shared-env", stack_env(mpi="openmpi fabrics=ucx target=zen3"),
     "spack.definitions[0].mpi[0]", "target=zen3 is site-specific"),
    ("targets-in-shared-env", stack_env() + "    targets: {host_compatible: false}\n",
     "spack.concretizer.targets", "targets are site-specific"),
    ("missing-include", stack_env().replace("../common/apps.yaml", "../common/apps-missing.yaml"),
     "spack.include[0]", "included path '../common/apps-missing.yaml' does not exist"),
    ("no-site-include", stack_env().replace("  - ../sites/$SCALEBENCH_SPACK_SITE\n", ""),
     "spack.include", "no site include"),
    ("unresolvable-include-var", stack_env().replace("../common/apps.yaml", "$HOME/apps.yaml"),
     "spack.include[0]", "uses $HOME, which the validator cannot resolve"),
    ("bad-matrix-row", stack_env(ref="$^mpi").replace("    - [$apps]\n", "    - $apps\n"),
     "spack.specs[0].matrix[0]", "a matrix row must be a non-empty list"),
    ("unknown-provider", stack_env() + "  packages:\n    all:\n      providers:\n        mpi: [openmpi, lapackx]\n",
     "spack.packages.all.providers.mpi[1]", "unknown package 'lapackx'"),
]


@pytest.mark.parametrize("text,key,fragment", [case[1:] for case in BROKEN], ids=[c[0] for c in BROKEN])
def test_broken_env_is_rejected_naming_file_and_key(tree, text, key, fragment):
    path = write_env(tree, "broken", text)
    findings = validate_tree(tree)
    assert findings, "no finding"
    mine = [f for f in findings if f.file == str(path) and f.key == key]
    assert mine, f"no finding at {path}: {key}; got:\n" + "\n".join(map(str, findings))
    assert any(fragment in f.message for f in mine), "\n".join(map(str, mine))
    # Only the broken env is wrong: the shipped ones next to it still pass.
    assert all(f.file.startswith(str(tree / "broken")) for f in findings), "\n".join(map(str, findings))
    # validate_env on the one file finds the same problem.
    assert any(f.key == key and fragment in f.message for f in validate_env(path))


def test_crossed_stacks_with_unify_false_pass(tree):
    path = write_env(tree, "crossed", stack_env(
        mpi="openmpi fabrics=ucx, openmpi fabrics=ofi, mpich device=ch3 netmod=tcp", unify="false"))
    assert validate_env(path) == []
    path = write_env(tree, "crossed2", stack_env(mpi="openmpi fabrics=ucx, mpich", unify="when_possible"))
    assert validate_env(path) == []


def test_matrix_exclude_removes_the_crossing(tree):
    text = stack_env(mpi="openmpi fabrics=ucx, mpich device=ch4 netmod=ucx").replace(
        "    - [$^mpi]\n", "    - [$^mpi]\n    exclude: ['^mpich']\n")
    assert validate_env(write_env(tree, "excluded", text)) == []


def test_finding_prints_file_key_message():
    finding = Finding("spack_envs/x/spack.yaml", "spack.specs[2]", "unknown package 'hpll'")
    assert str(finding) == "spack_envs/x/spack.yaml: spack.specs[2]: unknown package 'hpll'"


# -- site files ----------------------------------------------------------------------------------


def add_site(tree, name, packages, site_mpi, declaration="fabric: ethernet\nscheduler: none\n"):
    site = tree / "sites" / name
    site.mkdir()
    (site / "packages.yaml").write_text(packages)
    (site / "site-mpi.yaml").write_text(site_mpi)
    (site / "site.yaml").write_text(declaration)
    return site


GOOD_SITE_PACKAGES = """\
packages:
  gcc:
    externals:
    - spec: gcc@13.3.0 languages:='c,c++,fortran'
      prefix: /usr
    buildable: false
"""


def test_site_without_site_mpi_definition_is_named(tree):
    add_site(tree, "newsite", GOOD_SITE_PACKAGES,
             "packages:\n  openmpi:\n    externals:\n    - {spec: openmpi@4.1.6, prefix: /opt/ompi}\n"
             "    buildable: false\n")
    findings = validate_tree(tree)
    env = str(tree / "site-mpi" / "spack.yaml")
    assert [(f.file, f.key) for f in findings] == [(env, "spack.specs[0].matrix[1][0]")], findings
    assert "'$^site_mpi' is not defined with SCALEBENCH_SPACK_SITE=newsite" in findings[0].message


def test_site_missing_site_mpi_file_is_named(tree):
    site = add_site(tree, "newsite", GOOD_SITE_PACKAGES, "")
    (site / "site-mpi.yaml").unlink()
    findings = validate_tree(tree)
    keys = {(f.file, f.key) for f in findings}
    assert (str(tree / "site-mpi" / "spack.yaml"), "spack.include[3]") in keys, findings
    assert any("does not exist for SCALEBENCH_SPACK_SITE=newsite" in f.message for f in findings)


@pytest.mark.parametrize("packages,key,fragment", [
    ("packages:\n  openmpi:\n    externals:\n    - {spec: mpich@4.1, prefix: /usr}\n",
     "packages.openmpi.externals[0].spec", "the external's spec names 'mpich', listed under packages.openmpi"),
    ("packages:\n  openmpi:\n    externals:\n    - {spec: openmpi fabrics=ucx, prefix: /usr}\n",
     "packages.openmpi.externals[0].spec", "needs an exact version"),
    ("packages:\n  openmpi:\n    externals:\n    - {spec: openmpi@4.1.6}\n",
     "packages.openmpi.externals[0]", "needs `prefix`"),
    ("packages:\n  openmpi:\n    externals:\n    - {spec: openmpi@4.1.6 fabrics=infiniband, prefix: /usr}\n",
     "packages.openmpi.externals[0].spec", "'infiniband' is not a value of openmpi variant 'fabrics'"),
    ("packages:\n  cray-mpich:\n    buildable: false\n",
     "packages.cray-mpich.buildable", "buildable: false and no externals"),
    ("packages:\n  mpich:\n    require: [device=ch4 netmod=tcp]\n",
     "packages.mpich.require[0]", "'device=ch4 netmod=tcp' conflict"),
    ("packages:\n  mpich:\n    prefer: [netmode=tcp]\n",
     "packages.mpich.prefer[0]", "mpich has no variant 'netmode' (did you mean 'netmod'?)"),
    ("packages:\n  openmpy:\n    buildable: true\n",
     "packages.openmpy", "unknown package 'openmpy'"),
    ("packages:\n  openmpi:\n    externals: []\n    buildabel: false\n",
     "packages.openmpi.buildabel", "unknown key 'buildabel' in packages.openmpi (did you mean 'buildable'?)"),
    ("spack:\n  specs: [hpl]\n", "spack", "an included file holds config sections"),
    ("packages: [gcc]\n", "packages", "must be a mapping of package names"),
    ("packagez: {}\n", "packagez", "unknown key 'packagez' in an included file (did you mean 'packages'?)"),
])
def test_broken_site_file_is_named(tree, packages, key, fragment):
    site = add_site(tree, "newsite", packages, "definitions:\n- site_mpi: [openmpi@4.1.6]\n")
    findings = validate_tree(tree)
    file = str(site / "packages.yaml")
    mine = [f for f in findings if f.file == file and f.key == key]
    assert any(fragment in f.message for f in mine), "\n".join(map(str, findings))


def test_site_may_pin_targets_and_compilers(tree):
    add_site(tree, "pinned", GOOD_SITE_PACKAGES + "  all:\n    require: [target=zen4]\n",
             "definitions:\n- site_mpi: [openmpi@4.1.6]\npackages:\n  openmpi:\n    externals:\n"
             "    - {spec: openmpi@4.1.6 fabrics=ucx, prefix: /opt/ompi}\n    buildable: false\n")
    (tree / "sites" / "pinned" / "concretizer.yaml").write_text(
        "concretizer:\n  targets: {host_compatible: false, granularity: microarchitectures}\n")
    assert validate_tree(tree) == []


# -- the spec grammar and the data table --------------------------------------------------------


def test_parse_spec_nodes():
    nodes = parse_spec("hpl@2.3 +openmp ^openblas threads=openmp ^[virtuals=mpi] openmpi fabrics:=ucx,ofi")
    assert [(n.edge, n.name) for n in nodes] == [("", "hpl"), ("^", "openblas"), ("^", "openmpi")]
    assert nodes[0].version == "2.3" and nodes[2].virtuals == ("mpi",)
    assert nodes[2].variants == {"fabrics": ("ucx", "ofi")}
    gcc = parse_spec("gcc@12.2.0 languages:='c,c++,fortran'")[0]
    assert gcc.variants == {"languages": ("c", "c++", "fortran")}
    compiler = parse_spec("hpl %c,cxx=gcc@12")[1]
    assert (compiler.edge, compiler.name, compiler.virtuals, compiler.version) == ("%", "gcc", ("c", "cxx"), "12")
    assert parse_spec("lammps+openmp-package~kspace")[0].variants == {
        "openmp-package": ("true",), "kspace": ("false",)}
    assert parse_spec("mpich device=ch3:sock target=zen3")[0].attributes == {"target": "zen3"}


@pytest.mark.parametrize("text,fragment", [
    ("hpl lammps", "two package names"),
    ("hpl ^", "'^' without a package name"),
    ("hpl +openmp +openmp", "variant 'openmp' set twice"),
    ("hpl@2.3@2.2", "two versions"),
    ("hpl ! x", "unexpected '!'"),
])
def test_parse_spec_errors(text, fragment):
    with pytest.raises(SpecSyntaxError, match=fragment.replace("+", r"\+").replace("^", r"\^")):
        parse_spec(text)


def test_table_cites_its_source_and_knows_the_facts():
    table = load_table()
    text = (REPO / "scalebench" / "data" / "spack_packages.yaml").read_text()
    assert "spack-packages v2025.11.0" in text
    assert table.variants("openblas")["threads"]["values"] == ["none", "openmp", "pthreads"]
    assert table.variants("mpich")["device"]["values"] == ["ch3", "ch3:sock", "ch4"]
    assert {"ucx", "ofi", "none", "auto"} <= set(table.variants("openmpi")["fabrics"]["values"])
    assert table.variants("hpl") == {"openmp": {"type": "bool", "default": False}}
    assert {"openmpi", "mpich", "cray-mpich"} <= set(table.providers("mpi"))
    assert check_node(parse_spec("mpich device=ch3 netmod=tcp")[0], table) == []
    assert check_node(parse_spec("mpich netmod=tcp")[0], table) == [], "only explicit pairs conflict"


def test_table_entries_are_well_formed():
    data = yaml.safe_load((REPO / "scalebench" / "data" / "spack_packages.yaml").read_text())
    for name, entry in data["packages"].items():
        for vname, spec in (entry.get("variants") or {}).items():
            assert spec["type"] in ("bool", "single", "multi", "any"), (name, vname)
            if spec["type"] in ("single", "multi"):
                assert spec["values"], (name, vname)
                for value in str(spec["default"]).split(","):
                    assert value in [str(v) for v in spec["values"]], (name, vname, value)


# -- command line --------------------------------------------------------------------------------


def _args(*argv):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_cli_validate_shipped_tree_exits_0(capsys):
    assert cmd_spack_validate(_args()) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "no findings" in captured.err


def test_cli_validate_prints_one_finding_a_line_and_exits_1(tree, capsys):
    path = write_env(tree, "broken", stack_env(mpi="openmpi fabrics=infiniband"))
    assert cmd_spack_validate(_args(str(tree))) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{path}: spack.definitions[0].mpi[0]: 'openmpi fabrics=infiniband': 'infiniband' is not "
                     "a value of openmpi variant 'fabrics'; allowed: none, auto, cma, fca, hcoll, knem, mxm, "
                     "ofi, psm, psm2, ucc, ucx, verbs, xpmem"]
    assert cmd_spack_validate(_args(str(path))) == 1
    assert cmd_spack_validate(_args(str(tree / "openmpi-ucx"))) == 0


def test_cli_validate_missing_or_wrong_target_is_bad_input(tmp_path):
    """No such path, or a file that is no spack.yaml: the user's mistake (exit 2), not a finding (exit 1)."""
    with pytest.raises(InputError, match="nope does not exist$"):
        cmd_spack_validate(_args(str(tmp_path / "nope")))
    (tmp_path / "some_file.txt").write_text("spack: {}\n")
    with pytest.raises(InputError, match="some_file.txt is not a directory of environments, an environment "
                                         "directory or a spack.yaml$"):
        cmd_spack_validate(_args(str(tmp_path / "some_file.txt")))
