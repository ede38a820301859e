"""Every wheel of requirements.txt for each supported Python version and platform, into one directory,
so that an air-gapped login node installs with `make install WHEELHOUSE=DIR` (pip --no-index).

    python3 scripts/wheelhouse.py DIR [--python 3.12 ...] [--platform aarch64 ...]

Run on a connected machine with a Python 3 whose pip is 22 or newer (`make wheelhouse PYTHON=...` picks
it). The supported versions are the "Programming Language :: Python :: 3.X" classifiers of
pyproject.toml; the platforms are glibc 2.28 or newer (RHEL/Rocky/Alma 8+, SLES 15 SP3+) on x86_64 and
aarch64. requirements.txt pins every dependency, so each wheel is fetched without resolving (pip
evaluates environment markers against the running interpreter, not the target). Files already in DIR
are kept.
Exit codes: 0 done; 1 pip failed (its message above); 2 bad usage.
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

REPO = Path(__file__).resolve().parents[1]
REQUIREMENTS = REPO / "requirements.txt"
ARCHES = ("x86_64", "aarch64")
GLIBC_MINORS = range(28, 16, -1)  # manylinux_2_28 down to manylinux_2_17 (= manylinux2014)


def supported_pythons(pyproject: Path = REPO / "pyproject.toml") -> List[str]:
    """The Python versions pyproject.toml names in its classifiers, oldest first."""
    found = re.findall(r'"Programming Language :: Python :: (3\.\d+)"', pyproject.read_text())
    return sorted(set(found), key=lambda v: int(v.split(".")[1]))


def target_options(python: str, arch: str) -> List[str]:
    """pip options that select the wheels CPython `python` ("3.12") would install on `arch` Linux."""
    tag = "cp" + python.replace(".", "")
    platforms = [f"manylinux_2_{minor}_{arch}" for minor in GLIBC_MINORS] + [f"manylinux2014_{arch}"]
    return ["--only-binary=:all:", "--python-version", python, "--implementation", "cp", "--abi", tag,
            *(option for platform in platforms for option in ("--platform", platform))]


def download(dest: Path, python: str, arch: str) -> int:
    command = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
               *target_options(python, arch), "-d", str(dest), "-r", str(REQUIREMENTS)]
    return subprocess.run(command).returncode


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/wheelhouse.py", description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help="directory for the wheels (made if absent)")
    parser.add_argument("--python", action="append", metavar="3.X",
                        help="a Python version (repeatable; default: every supported one)")
    parser.add_argument("--platform", action="append", choices=ARCHES,
                        help="a machine (repeatable; default: x86_64 and aarch64)")
    args = parser.parse_args(argv)
    supported = supported_pythons()
    pythons = args.python or supported
    unknown = [p for p in pythons if p not in supported]
    if unknown:
        parser.error(f"unsupported Python {', '.join(unknown)}: choose from {', '.join(supported)}")
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode:
        print(f"wheelhouse: {sys.executable} has no pip: run this with a Python that has it", file=sys.stderr)
        return 2
    args.dest.mkdir(parents=True, exist_ok=True)
    for python in pythons:
        for arch in args.platform or ARCHES:
            print(f"wheelhouse: Python {python} on {arch}", flush=True)
            if download(args.dest, python, arch):
                return 1
    wheels = list(args.dest.glob("*.whl"))
    size = sum(w.stat().st_size for w in wheels) / 2**20
    print(f"wheelhouse: {len(wheels)} wheels, {size:.0f} MiB in {args.dest}; "
          f"on the login node: make install WHEELHOUSE=<this directory>")
    return 0


if __name__ == "__main__":
    sys.exit(main())
