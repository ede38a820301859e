"""A Spack stack's lock as a run keeps it: its concrete programs, and the archive written once."""
import json

import pytest

from scalebench.errors import InputError
from scalebench.site import spack_lock as lock

# The shape of a Spack v1.1 spack.lock (lockfile-version 6), cut to what is read.
LOCK = {
    "_meta": {"file-type": "spack-lockfile", "lockfile-version": 6, "specfile-version": 5},
    "roots": [{"hash": "h1", "spec": "hpl@2.3"}, {"hash": "h2", "spec": "osu-micro-benchmarks@7.5"}],
    "concrete_specs": {
        "h1": {"name": "hpl", "version": "2.3", "parameters": {"openmp": True, "build_system": "autotools",
                                                             "cflags": [], "patches": ["abc"]}},
        "h2": {"name": "osu-micro-benchmarks", "version": "7.5.1", "parameters": {"cuda": False}},
        "h3": {"name": "openmpi", "version": "5.0.8",
               "parameters": {"fabrics": ["ucx"], "schedulers": ["slurm"], "internal-pmix": False}},
        "h4": {"name": "ucx", "version": "1.19.0",
               "parameters": {"verbs": True, "rc": True, "dc": True, "thread_multiple": True, "cflags": []}},
        "h5": {"name": "zlib", "version": "1.3.1", "parameters": {}},
    },
}


def test_the_programs_and_the_fabric_they_run_over_with_versions_and_variants():
    assert lock.concrete_programs(LOCK) == (
        "hpl@2.3 build_system=autotools +openmp; osu-micro-benchmarks@7.5.1 ~cuda; "
        "openmpi@5.0.8 fabrics=ucx ~internal-pmix schedulers=slurm; ucx@1.19.0 +dc +rc +thread_multiple +verbs")


@pytest.mark.parametrize("data", [{}, [], {"concrete_specs": []}])
def test_a_file_that_is_no_lock_is_named(data):
    with pytest.raises(InputError, match="^stack.lock: no concrete_specs"):
        lock.concrete_programs(data, "stack.lock")


def test_the_lock_is_archived_by_content_once(tmp_path):
    path = tmp_path / "env" / "spack.lock"
    path.parent.mkdir()
    path.write_text(json.dumps(LOCK))
    digest, programs = lock.describe(path)
    archived = lock.archive(path, tmp_path / "results")
    assert archived.name == f"{digest.split()[0][7:]}.spack.lock" and archived.read_text() == path.read_text()
    assert programs.startswith("hpl@2.3")
    stamp = archived.stat().st_mtime_ns
    assert lock.archive(path, tmp_path / "results") == archived and archived.stat().st_mtime_ns == stamp
    path.write_text(json.dumps({**LOCK, "roots": LOCK["roots"][:1]}))  # re-concretized: a second archive
    assert lock.archive(path, tmp_path / "results") != archived
    assert len(list((tmp_path / "results" / "spack-locks").iterdir())) == 2


def test_no_lock_no_archive(tmp_path):
    assert lock.archive(tmp_path / "spack.lock", tmp_path) is None
    assert lock.describe(tmp_path / "spack.lock") == (f"missing {tmp_path / 'spack.lock'}", "")
