"""requirements.txt installs on every supported Python (pyproject.toml's classifiers) on x86_64 and
aarch64 Linux with glibc 2.28 or newer: each pin has a wheel for the target, and each dependency the
target needs is pinned at a version it accepts.

The wheels are resolved for the target by pip (--python-version, --platform, --only-binary=:all:), so
no interpreter of that version is needed. Dependencies are checked here, not by pip, because pip
evaluates environment markers against the running interpreter. Cold, the 8 targets take about a minute
of registry queries; then they come from .cache/ until requirements.txt changes.
"""
import re

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import REPO
from wheel_cache import REQUIREMENTS, resolution, wheelhouse

pytestmark = pytest.mark.integration

SUPPORTED = wheelhouse.supported_pythons()
TARGETS = [(python, arch) for python in SUPPORTED for arch in wheelhouse.ARCHES]


def pins() -> dict[str, str]:
    """requirements.txt as {canonical name: version}."""
    pinned = {}
    for line in REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pinned[canonicalize_name(name)] = version
    return pinned


def marker_environment(python: str, arch: str) -> dict[str, str]:
    """PEP 508 marker values of CPython `python` on `arch` Linux (oldest patch release)."""
    return {"python_version": python, "python_full_version": f"{python}.0",
            "implementation_version": f"{python}.0", "implementation_name": "cpython",
            "platform_python_implementation": "CPython", "platform_machine": arch, "platform_system": "Linux",
            "sys_platform": "linux", "os_name": "posix", "platform_release": "", "platform_version": "",
            "extra": ""}


def test_supported_versions_agree():
    pyproject = (REPO / "pyproject.toml").read_text()
    oldest = SUPPORTED[0].split(".")[1]
    assert SUPPORTED == [f"3.{m}" for m in range(int(oldest), int(oldest) + len(SUPPORTED))], SUPPORTED
    assert f'requires-python = ">=3.{oldest}"' in pyproject
    assert f"min_minor={oldest} " in (REPO / "scripts" / "install-venv.sh").read_text()


def test_scalebench_dependencies_are_pinned():
    declared = re.search(r"^dependencies = \[(.*?)\]", (REPO / "pyproject.toml").read_text(), re.M | re.S).group(1)
    names = {canonicalize_name(Requirement(d).name) for d in re.findall(r'"([^"]+)"', declared)}
    assert names - set(pins()) == set()


@pytest.mark.parametrize("python, arch", TARGETS, ids=[f"{p}-{a}" for p, a in TARGETS])
def test_every_pin_has_a_wheel_and_every_dependency_a_pin(python, arch):
    report = resolution(python, arch)
    chosen = {canonicalize_name(item["metadata"]["name"]): item for item in report["install"]}
    pinned = pins()
    assert set(chosen) == set(pinned)
    assert all(item["download_info"]["url"].endswith(".whl") for item in chosen.values())
    environment = marker_environment(python, arch)
    problems = []
    for name, item in sorted(chosen.items()):
        for line in item["metadata"].get("requires_dist", []):
            dependency = Requirement(line)
            if dependency.marker and not dependency.marker.evaluate(environment):
                continue
            wanted = canonicalize_name(dependency.name)
            if wanted not in pinned:
                problems.append(f"{name} needs {dependency}: not pinned")
            elif not dependency.specifier.contains(pinned[wanted], prereleases=True):
                problems.append(f"{name} needs {dependency}: pinned {pinned[wanted]}")
    assert not problems, f"Python {python} on {arch}:\n" + "\n".join(problems)
