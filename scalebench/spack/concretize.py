"""Concretize a Spack environment of spack_envs/ with a real Spack, on a temporary copy.

`spack -e DIR concretize` writes spack.lock and .spack-env/ into DIR, so the environment's whole
tree (the env directory's parent, holding common/ and sites/ that its relative includes reach) is
copied to a temporary directory first; nothing is ever written into the repository.

Spack is found through SPACK_ROOT (bin/spack under it) or `spack` on PATH; the site whose include
files are used comes from `site=` or SCALEBENCH_SPACK_SITE. Concretizing costs 1-3 minutes of CPU
and 1-3.5 GB of memory per environment, so the solve runs under `nice` (19 by default): HPL may be
measuring on the same machine.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from scalebench import lifetime, loaders, textfile
from scalebench.errors import InputError
from scalebench.spack.validate import SITE_VAR, find_envs

#: Default time limit of one `spack concretize` (a cold solve of lammps or openfoam is ~100-150 s).
DEFAULT_TIMEOUT_S = 1800.0
_IGNORED = shutil.ignore_patterns(".spack-env", "spack.lock", "__pycache__", "*.pyc")


@dataclass(frozen=True)
class SpackInstall:
    """A Spack to run: its `spack` script, and where it was found (SPACK_ROOT or PATH)."""

    executable: Path
    found_by: str

    def command(self) -> list[str]:
        return [str(self.executable)]


def find_spack(environ: Mapping[str, str] | None = None) -> SpackInstall | None:
    """$SPACK_ROOT/bin/spack if SPACK_ROOT is set and has one, else `spack` on PATH, else None."""
    environ = os.environ if environ is None else environ
    root = environ.get("SPACK_ROOT")
    if root:
        candidate = Path(root) / "bin" / "spack"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return SpackInstall(candidate, "SPACK_ROOT")
    on_path = shutil.which("spack", path=environ.get("PATH"))
    if on_path:
        return SpackInstall(Path(on_path), "PATH")
    return None


def no_spack_reason(environ: Mapping[str, str] | None = None) -> str:
    """Why find_spack() found nothing, in one line."""
    environ = os.environ if environ is None else environ
    root = environ.get("SPACK_ROOT")
    if root:
        return f"SPACK_ROOT={root} has no executable bin/spack, and no `spack` is on PATH"
    return "no Spack: SPACK_ROOT is not set and no `spack` is on PATH"


@dataclass
class ConcretizeResult:
    """One `spack -e <copy> concretize`: success, wall time and the lock file's hash; `roots` are
    the root specs with their DAG hash, `packages` every concrete package name and its versions."""

    env: str
    site: str | None
    ok: bool
    seconds: float
    returncode: int | None
    timed_out: bool
    command: list[str]
    lock_sha256: str | None = None
    roots: list[str] = field(default_factory=list)
    packages: dict[str, list[str]] = field(default_factory=dict)
    output_tail: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        state = "concretized" if self.ok else ("timed out" if self.timed_out else
                                               f"FAILED (exit {self.returncode})")
        lock = f", spack.lock sha256 {self.lock_sha256[:12]}" if self.lock_sha256 else ""
        return f"{self.env} [{self.site}]: {state} in {self.seconds:.1f} s{lock}"


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _end_group(proc: subprocess.Popen) -> None:
    """SIGKILL to spack's process group: it solves in child processes."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _nice_prefix(niceness: int | None) -> list[str]:
    if not niceness:
        return []
    nice = shutil.which("nice")
    return [nice, "-n", str(niceness)] if nice else []


def concretize_env(env_dir, *, site: str | None = None, spack: SpackInstall | None = None,
                   tree=None, timeout: float = DEFAULT_TIMEOUT_S, niceness: int | None = 19,
                   extra_args: Sequence[str] = (), environ: Mapping[str, str] | None = None,
                   keep_dir=None) -> ConcretizeResult:
    """Concretize the environment in env_dir on a temporary copy of `tree` (default: env_dir's
    parent). `site` sets SCALEBENCH_SPACK_SITE (default: the variable as already set).
    `keep_dir`, when given, receives the copy (spack.lock included) instead of a deleted temp dir."""
    env_dir = Path(env_dir).resolve()
    if env_dir.name == "spack.yaml":
        env_dir = env_dir.parent
    if not (env_dir / "spack.yaml").is_file():
        raise InputError(f"{env_dir}: no spack.yaml")
    tree = Path(tree).resolve() if tree is not None else env_dir.parent
    try:
        relative = env_dir.relative_to(tree)
    except ValueError:
        raise InputError(f"{env_dir} is not under {tree}") from None
    base_env = dict(os.environ if environ is None else environ)
    if site is not None:
        base_env[SITE_VAR] = site
    site = base_env.get(SITE_VAR)
    if not site:
        raise InputError(f"no site: pass site= or set {SITE_VAR} (a directory under {tree / 'sites'})")
    spack = spack or find_spack(base_env)
    if spack is None:
        raise InputError(no_spack_reason(base_env))

    workdir = Path(keep_dir) if keep_dir is not None else Path(tempfile.mkdtemp(prefix="scalebench-spack-"))
    try:
        copy_root = workdir / tree.name
        shutil.copytree(tree, copy_root, ignore=_IGNORED, symlinks=True)
        env_copy = copy_root / relative
        command = [*_nice_prefix(niceness), *spack.command(), "-e", str(env_copy), "concretize",
                   *extra_args]
        start = time.monotonic()
        timed_out = False
        proc = lifetime.spawn(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=base_env,
                              start_new_session=True)
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _end_group(proc)
            output, _ = proc.communicate()
        except BaseException:  # interrupted: spack, in a session of its own, is not left solving
            _end_group(proc)
            proc.wait()
            raise
        seconds = time.monotonic() - start
        lock = env_copy / "spack.lock"
        ok = not timed_out and proc.returncode == 0 and lock.is_file()
        result = ConcretizeResult(env=str(relative), site=site, ok=ok, seconds=round(seconds, 2),
                                  returncode=None if timed_out else proc.returncode,
                                  timed_out=timed_out, command=command, output_tail=_tail(output or ""))
        if lock.is_file():
            data = textfile.read_bytes(lock, "spack.lock", loaders.REPORT_LIMIT)
            result.lock_sha256 = hashlib.sha256(data).hexdigest()
            try:
                lockfile = loaders.parse_json(data, str(lock))
                result.roots = [f"{root['spec']} /{root['hash'][:7]}" for root in lockfile.get("roots", [])]
                for node in lockfile.get("concrete_specs", {}).values():
                    versions = result.packages.setdefault(node["name"], [])
                    if str(node.get("version")) not in versions:
                        versions.append(str(node.get("version")))
            except (InputError, AttributeError, KeyError, TypeError):
                pass
        return result
    finally:
        if keep_dir is None:
            shutil.rmtree(workdir, ignore_errors=True)


