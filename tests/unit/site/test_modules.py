"""A site's modules are loaded in its jobs, or the run stops before any job with one line saying why
(scalebench.site.modules); off the cluster, stub modules let a dry run write the real job scripts."""
import os

import pytest

from conftest import lmod_environ

from scalebench.errors import InputError
from scalebench.site import modules

NAMES = ["openmpi/5.0-ucx", "hpl/2.3"]


def test_module_names_once_in_order():
    envs = [{"modules": ["a/1", {"name": "b/2", "collection": False}]}, {"modules": ["a/1", "c"]}, {}]
    assert modules.module_names(envs) == ["a/1", "b/2", "c"]


def test_no_module_system_no_check():
    assert modules.check("s", "nomod", NAMES, dry_run=False, environ={}) is False
    assert modules.check("s", "lmod", [], dry_run=False, environ={}) is False


def test_a_host_without_lmod_is_named_with_the_way_out():
    with pytest.raises(InputError, match=r"^system s: its stacks load lmod modules \(openmpi/5.0-ucx, hpl/2.3\) but "
                                         r"LMOD_CMD is not set on this host: run on the cluster's login node, or "
                                         r"dry-run here with SCALEBENCH_MODULE_STUBS=1"):
        modules.check("s", "lmod", NAMES, dry_run=True, environ={})


def test_environment_modules_need_modulecmd():
    with pytest.raises(InputError, match=r"but modulecmd is not on PATH on this host"):
        modules.check("s", "tmod4", NAMES, dry_run=False, environ={"PATH": "/nonexistent"})


def test_stubs_serve_a_dry_run_only():
    environ = {"SCALEBENCH_MODULE_STUBS": "1", "LMOD_CMD": "lmod"}
    with pytest.raises(InputError, match="stub modules serve a --dry-run only"):
        modules.check("s", "lmod", NAMES, dry_run=False, environ=environ)
    assert modules.check("s", "lmod", NAMES, dry_run=True, environ=environ) is True
    with pytest.raises(InputError, match="spack load"):
        modules.check("s", "spack", NAMES, dry_run=True, environ=environ)


def test_stubs_are_written_and_put_first_on_modulepath(tmp_path):
    environ = {"MODULEPATH": "/site/modules"}
    directory = modules.use_stubs(NAMES, tmp_path / "stubs", "lmod", environ)
    assert (directory / "openmpi" / "5.0-ucx.lua").is_file() and (directory / "hpl" / "2.3.lua").is_file()
    assert environ["MODULEPATH"] == f"{directory}{os.pathsep}/site/modules"
    modules.write_stubs(["gcc/12"], tmp_path / "tcl", "tmod4")
    assert (tmp_path / "tcl" / "gcc" / "12").read_text().startswith("#%Module1.0")
    with pytest.raises(InputError, match="leaves the module tree"):
        modules.write_stubs(["../../etc/x"], tmp_path / "evil", "lmod")


def test_lmod_finds_a_module_of_the_tree_and_names_one_missing(tmp_path):
    environ = lmod_environ()
    (tmp_path / "mods" / "openmpi").mkdir(parents=True)
    (tmp_path / "mods" / "openmpi" / "5.0-ucx.lua").write_text('setenv("X", "1")\n')
    environ["MODULEPATH"] = str(tmp_path / "mods")
    with pytest.raises(InputError, match=r"^system s: module\(s\) hpl/2.3 not found on MODULEPATH"):
        modules.check("s", "lmod", NAMES, dry_run=False, environ=environ)
    assert modules.check("s", "lmod", NAMES[:1], dry_run=False, environ=environ) is False
