"""The stacks' environment modules, checked before ReFrame runs anything.

ReFrame loads a stack's `modules:` in each job (`module load ...` lines) only with a module system;
without Lmod on the host it stops with "could not find a sane Lmod installation", and a module
missing from MODULEPATH fails every case of the stack with a page of output. Both become one line
here, before any job. Off the cluster (a laptop, CI) a dry run of a site that uses modules needs its
modules: SCALEBENCH_MODULE_STUBS=1 writes an empty modulefile for each one the stacks name into the
run directory and puts that first on MODULEPATH, so ReFrame writes the `module load` lines a real run
would. Stubs are refused outside --dry-run: a real job must load the site's real modules.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterable, Mapping, MutableMapping, Sequence

from scalebench import atomic
from scalebench.errors import InputError

STUBS_VARIABLE = "SCALEBENCH_MODULE_STUBS"
# What ReFrame's modules backends run: Lmod's $LMOD_CMD, Environment Modules' `modulecmd` on PATH.
_COMMAND = {"lmod": "LMOD_CMD is not set", "tmod4": "modulecmd is not on PATH", "envmod": "modulecmd is not on PATH"}
_INSTALL_HINT = {"lmod": "Lmod (Debian/Ubuntu: apt install lmod; RHEL: dnf install Lmod), then source its "
                         "profile (/etc/profile.d/lmod.sh)",
                 "tmod4": "Environment Modules 4+ (apt install environment-modules), then source its profile",
                 "envmod": "Environment Modules (apt install environment-modules), then source its profile"}


def module_names(environments: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every module the stacks load, once, in order (a ReFrame module mapping by its name)."""
    names: list[str] = []
    for env in environments:
        for module in env.get("modules", ()):
            name = str(module["name"] if isinstance(module, Mapping) else module)
            if name not in names:
                names.append(name)
    return names


def check(system: str, modules_system: str, names: Sequence[str], dry_run: bool,
          environ: Mapping[str, str] | None = None) -> bool:
    """Whether the stacks' modules will load in this ReFrame process: True when stubs must stand in for
    them (a dry run off the cluster, see use_stubs), False when the host has them; InputError naming
    what is missing otherwise."""
    environ = os.environ if environ is None else environ
    if not names or modules_system == "nomod":
        return False
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    stubs = bool(environ.get(STUBS_VARIABLE))
    if stubs and not dry_run:
        raise InputError(f"{STUBS_VARIABLE} is set: stub modules serve a --dry-run only (a real job must load "
                         "the site's modules); unset it to run")
    _require_command(system, modules_system, shown, environ, stubs)
    if not stubs and modules_system == "lmod":
        missing = [name for name in names if not lmod_has(name, environ)]
        if missing:
            raise InputError(f"system {system}: module(s) {', '.join(missing)} not found on MODULEPATH "
                             f"({environ.get('MODULEPATH', 'unset')}); on the cluster, load what sets MODULEPATH "
                             f"first; elsewhere, dry-run with {STUBS_VARIABLE}=1")
    return stubs


def use_stubs(names: Sequence[str], directory: Path, modules_system: str,
              environ: MutableMapping[str, str] | None = None) -> Path:
    """Stub modulefiles of `names` under `directory`, first on this process's MODULEPATH."""
    environ = os.environ if environ is None else environ
    write_stubs(names, directory, modules_system)
    environ["MODULEPATH"] = os.pathsep.join([str(directory), *filter(None, [environ.get("MODULEPATH")])])
    return directory


def _require_command(system: str, modules_system: str, shown: str, environ: Mapping[str, str], stubs: bool) -> None:
    if modules_system == "spack":
        if stubs:
            raise InputError(f"system {system}: modules_system spack loads with `spack load`; "
                             f"{STUBS_VARIABLE} cannot stand in for it (dry-run on the cluster)")
        return
    found = environ.get("LMOD_CMD") if modules_system == "lmod" else shutil.which("modulecmd", path=environ.get("PATH"))
    if not found:
        where = (f"dry-running here with {STUBS_VARIABLE}=1 needs {_INSTALL_HINT[modules_system]}" if stubs
                 else f"run on the cluster's login node, or dry-run here with {STUBS_VARIABLE}=1 "
                      f"(needs {_INSTALL_HINT[modules_system]})")
        raise InputError(f"system {system}: its stacks load {modules_system} modules ({shown}) but "
                         f"{_COMMAND[modules_system]} on this host: {where}")


def lmod_has(name: str, environ: Mapping[str, str]) -> bool:
    """Whether Lmod finds `name` on MODULEPATH (`module is-avail`)."""
    command = environ["LMOD_CMD"]
    if not shutil.which(command, path=environ.get("PATH")) and not os.access(command, os.X_OK):
        raise InputError(f"LMOD_CMD={command}: not an executable")
    proc = subprocess.run([command, "bash", "is-avail", name], env=dict(environ), capture_output=True, text=True,
                          timeout=60)
    return proc.returncode == 0


def write_stubs(names: Iterable[str], directory: Path, modules_system: str) -> Path:
    """An empty modulefile per name (Lua for Lmod, Tcl for Environment Modules) under `directory`."""
    for name in names:
        if ".." in Path(name).parts or Path(name).is_absolute():
            raise InputError(f"module {name!r}: not a module name (it leaves the module tree)")
        lua = modules_system == "lmod"
        path = directory / (f"{name}.lua" if lua else name)
        path.parent.mkdir(parents=True, exist_ok=True)
        comment = "-- " if lua else "#%Module1.0\n# "
        atomic.write(path, f"{comment}scalebench: stub of the site's module {name}, for a --dry-run off the cluster\n",
                     replace=True, what="module stubs")
    return directory
