"""Offline validator of the Spack environments in spack_envs/ (pure Python + PyYAML, no Spack).

What it checks, each problem as a `Finding(file, key, message)`:

- YAML: the file parses, no key is repeated in a mapping.
- Environment structure: a top-level `spack:` mapping holding only the keys of the subset of the
  Spack v1.1 environment schema this project uses (`ENV_KEYS`); `include`, `definitions`, `specs`
  (strings or `{matrix, exclude}`), `concretizer`, `packages`, `view` of the right shapes.
- Includes: each included file or directory exists inside the environment tree (the directory validated,
  or the parent of a single environment's directory: other paths are named, never read);
  `$SCALEBENCH_SPACK_SITE` in an include path is
  checked for every site directory that can replace it (sites/<site>/), and every environment must
  include a site (compilers, externals and targets come from there).
- Site-specific settings (externals, compilers, `concretizer:targets`, `target=`/`os=` in specs,
  pinned compiler versions) appear only in site files, never in the shared envs or common/.
- Names: every `$name` / `$^name` reference is defined (per site, in Spack's merge order: the env's
  own definitions, then those of its includes in order); package, variant and value names in every
  spec string (specs, definitions, requirements, preferences, externals) are those of the data
  table scalebench/data/spack_packages.yaml; a node that sets every constraint of one of the
  package's conflicts (e.g. mpich `device=ch4 netmod=tcp`) is an error.
- Stacks: an environment whose expanded specs use more than one MPI must say `unify: false` (or
  `when_possible`): Spack's solver fails on `unify: true` across MPIs with an opaque internal error.
- Fabrics (scalebench.spack.fabric_rules): an environment named <mpi>-<transport> (openmpi-ucx, ...)
  requests, for each site, what scalebench/data/spack_fabrics.yaml requires of that name, of the
  site's fabric class and of its scheduler, both declared in sites/<site>/site.yaml.
  Expansion (definitions, matrices) stops at MAX_SPECS specs per environment: a matrix crossed ten
  times would otherwise never end.
"""
from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scalebench import loaders, paths
from scalebench.errors import InputError
from scalebench.spack.expand import MAX_SPECS, Expansion  # noqa: F401 (MAX_SPECS: part of this module's API)
from scalebench.spack.fabric_rules import (SITE_FILE, SITE_KEYS, FabricRules, externals_only, load_rules,
                                           required_nodes, spell, unmet)
from scalebench.spack.sections import SectionChecks, _Definition, _type_name, _unknown_key
from scalebench.spack.specs import (Node, PackageTable, SpecSyntaxError, check_node, load_table, merge_nodes, parse_spec,
                                    words)

#: The environment variable naming the site directory an environment includes.
SITE_VAR = "SCALEBENCH_SPACK_SITE"
_SITE_VAR_RE = re.compile(r"\$(?:\{" + SITE_VAR + r"\}|" + SITE_VAR + r"(?![A-Za-z0-9_]))")
_OTHER_VAR_RE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")

#: Keys of `spack:` this project uses (a subset of Spack v1.1's env schema).
ENV_KEYS = ("include", "definitions", "specs", "concretizer", "packages", "view", "config",
            "modules", "mirrors", "env_vars")
#: Top-level sections an included file may hold.
INCLUDE_SECTIONS = ("definitions", "packages", "concretizer", "compilers", "config", "modules",
                    "mirrors", "env_vars", "toolchains")
#: Files a directory include reads (Spack reads <section>.yaml in an included directory).
DIRECTORY_SECTION_FILES = tuple(f"{s}.yaml" for s in INCLUDE_SECTIONS)
INCLUDE_ENTRY_KEYS = ("path", "optional", "when", "name", "path_override_env_var", "sha256",
                      "prefer_modify")


@dataclass(frozen=True, order=True)
class Finding:
    """One problem: the file, the YAML key path inside it and a message."""

    file: str
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.key}: {self.message}"


# ---------------------------------------------------------------------------------------------
# YAML


def _load_yaml(path: Path) -> tuple[Any, str | None]:
    """(data, None), or (None, the reason without the path: a Finding names the file)."""
    try:
        return loaders.load_yaml(path, "spack file"), None
    except InputError as exc:
        reason = str(exc)
        return None, reason[len(f"{path}: "):] if reason.startswith(f"{path}: ") else reason


# What path_state says of a path that can be used; anything else says why it cannot.
DIRECTORY, FILE, OTHER = "directory", "file", "other"


def path_state(path: Path) -> str:
    """DIRECTORY, FILE or OTHER (symbolic links followed), or why `path` cannot be used: "does not
    exist", "is a loop of symbolic links", "cannot be read (Permission denied)" ... (pathlib's exists()
    says False for a loop and raises for a directory the user may not search)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as err:
        if err.errno in (errno.ENOENT, errno.ENOTDIR):
            return "does not exist"
        if err.errno == errno.ELOOP:
            return "is a loop of symbolic links"
        return f"cannot be read ({err.strerror})"
    return DIRECTORY if stat.S_ISDIR(mode) else FILE if stat.S_ISREG(mode) else OTHER


def _listing(directory: Path) -> tuple[list[str], str | None]:
    """(the names in `directory`, None), or ([], why it cannot be listed)."""
    try:
        return sorted(os.listdir(directory)), None
    except OSError as err:
        return [], f"cannot be read ({err.strerror})"


def subdirectories(directory: Path) -> list[str] | None:
    """The directories in `directory` (site directories: not hidden ones), sorted; None when it cannot
    be read."""
    names, unreadable = _listing(directory)
    if unreadable:
        return None
    return [name for name in names if not name.startswith(".") and path_state(directory / name) == DIRECTORY]


def _yaml_files(directory: Path, unreadable: list[tuple[str, str]] | None = None) -> list[Path]:
    """The .yaml files under `directory` (not inside .spack-env/, symbolic links to directories not
    followed); each directory that cannot be read is appended to `unreadable` as (path, why)."""
    def failed(err: OSError) -> None:
        if unreadable is not None:
            unreadable.append((_display(Path(str(err.filename))), f"cannot be read ({err.strerror})"))

    found: list[Path] = []
    for root, dirs, files in os.walk(directory, onerror=failed):
        dirs[:] = sorted(d for d in dirs if d != ".spack-env")
        found.extend(Path(root, name) for name in files if name.endswith(".yaml"))
    return sorted(found)


# ---------------------------------------------------------------------------------------------
# Validation


def _display(path: Path) -> str:
    return os.path.normpath(str(path))


@dataclass
class _ConfigFile:
    """What a file contributes to an environment (the env's own file or an include)."""

    file: str
    prefix: str        # key path prefix: 'spack.' for the env, '' for an included file
    data: dict[str, Any]
    site: bool


class _Validator(SectionChecks, Expansion):
    def __init__(self, table: PackageTable, root: Path, rules: FabricRules | None = None) -> None:
        self.table = table
        self.rules = rules or load_rules()
        self.root = Path(os.path.realpath(root))  # includes stay inside it
        self.findings: list[Finding] = []
        self._seen: set[Finding] = set()
        self._checked_files: dict[tuple[str, bool], dict[str, Any] | None] = {}
        self._declarations: dict[str, dict[str, str]] = {}

    def add(self, file: str, key: str, message: str) -> None:
        # Messages quote specs and keys from the files: bounded, so one finding stays one readable line.
        message = message if len(message) <= 500 else message[:497] + "..."
        finding = Finding(file, key, message)
        if finding not in self._seen:
            self._seen.add(finding)
            self.findings.append(finding)

    # -- files ---------------------------------------------------------------------------------

    def check_config_file(self, path: Path, *, site: bool) -> dict[str, Any] | None:
        """An included file of config sections; returns its data (None when unusable)."""
        file = _display(path)
        cache_key = (file, site)
        if cache_key in self._checked_files:
            return self._checked_files[cache_key]
        data, error = _load_yaml(path)
        result: dict[str, Any] | None = None
        if error:
            self.add(file, "<yaml>", error)
        elif data is None:
            result = {}
        elif not isinstance(data, dict):
            self.add(file, "<root>", f"an included file is a mapping of config sections, "
                                     f"not {_type_name(data)}")
        elif "spack" in data:
            self.add(file, "spack", "an included file holds config sections (packages:, definitions:, "
                                    "...), not a `spack:` environment")
        else:
            result = data
            for section, value in data.items():
                if section not in INCLUDE_SECTIONS:
                    self.add(file, str(section), _unknown_key(section, INCLUDE_SECTIONS, "an included file"))
                    continue
                self._check_section(file, str(section), section, value, site=site)
        self._checked_files[cache_key] = result
        return result

    def check_env(self, path: Path) -> None:
        path = Path(path)
        if path_state(path) == DIRECTORY:
            path = path / "spack.yaml"
        file = _display(path)
        if not self._inside(file, "<file>", file, path):  # a spack.yaml linked from elsewhere
            return
        data, error = _load_yaml(path)
        if error:
            self.add(file, "<yaml>", error)
            return
        if not isinstance(data, dict) or "spack" not in data:
            found = f" (found: {words(data)})" if isinstance(data, dict) and data else ""
            self.add(file, "spack", f"missing the top-level `spack:` mapping of a Spack environment{found}")
            return
        for key in data:
            if key != "spack":
                self.add(file, str(key), f"unknown top-level key '{key}': an environment file holds "
                                         "only `spack:`")
        env = data["spack"]
        if not isinstance(env, dict):
            self.add(file, "spack", f"must be a mapping, not {_type_name(env)}")
            return
        for key in env:
            if key not in ENV_KEYS:
                self.add(file, f"spack.{key}", _unknown_key(key, ENV_KEYS, "spack:"))
        for section in ("packages", "concretizer", "view", "config", "modules", "mirrors", "env_vars"):
            if section in env:
                self._check_section(file, f"spack.{section}", section, env[section], site=False)
        own_definitions: list[_Definition] = []
        if "definitions" in env:
            own_definitions = self.check_definitions(file, "spack.definitions", env["definitions"], site=False)
        if "specs" not in env or not env["specs"]:
            self.add(file, "spack.specs", "no specs: an environment lists what it builds")
        else:
            self.check_spec_list(file, "spack.specs", env["specs"], site=False)

        declarations: dict[str, dict[str, str]] = {}
        includes = self._resolve_includes(file, path.parent, env.get("include", []), declarations)
        sites = sorted({site for site, _ in includes if site is not None})
        site_runs: list[str | None] = list(sites) if sites else [None]
        undefined: dict[tuple[str, str, str], tuple[list[str], set[str]]] = {}
        unmet_by_name: dict[tuple[str, str, str], set[str]] = {}
        for site in site_runs:
            configs = [_ConfigFile(file, "spack.", env, site=False)]
            for include_site, included in includes:
                if include_site in (None, site):
                    configs.extend(included)
            definitions = list(own_definitions)
            for config in configs[1:]:
                if "definitions" in config.data:
                    definitions.extend(self._definitions_of(config))
            expanded = self._expand(file, env, definitions, undefined, site)
            self._check_stacks(file, env, configs, expanded, site)
            self._check_fabric(file, path.parent.name, configs, expanded, site,
                               declarations.get(site or "", {}), unmet_by_name)
        for (ref_file, key, ref), (known, missing_sites) in undefined.items():
            self.add(ref_file, key, f"'{ref}' is not defined{_with_sites(missing_sites, sites)} "
                                    f"(defined: {words(sorted(known)) or 'none'})")
        for (rule_file, key, message), failing_sites in unmet_by_name.items():
            self.add(rule_file, key, f"{message}{_with_sites(failing_sites, sites)}")

    def _definitions_of(self, config: _ConfigFile) -> list[_Definition]:
        found = []
        for index, entry in enumerate(config.data.get("definitions") or []):
            if isinstance(entry, dict):
                for name, items in entry.items():
                    if name != "when" and isinstance(name, str):
                        found.append(_Definition(config.file, f"definitions[{index}].{name}", name,
                                                 items if isinstance(items, list) else []))
        return found

    def _resolve_includes(self, file: str, env_dir: Path, entries: Any, declarations: dict[str, dict[str, str]]
                          ) -> list[tuple[str | None, list[_ConfigFile]]]:
        """[(site or None, config files it contributes)], in include order; `declarations` receives
        each included site directory's site.yaml (its fabric and scheduler)."""
        resolved: list[tuple[str | None, list[_ConfigFile]]] = []
        if not isinstance(entries, list):
            self.add(file, "spack.include", f"must be a list of paths, not {_type_name(entries)}")
            return resolved
        has_site = False
        for index, entry in enumerate(entries):
            key = f"spack.include[{index}]"
            optional = False
            if isinstance(entry, dict):
                for sub in entry:
                    if sub not in INCLUDE_ENTRY_KEYS:
                        self.add(file, f"{key}.{sub}", _unknown_key(sub, INCLUDE_ENTRY_KEYS, "an include"))
                if "path" not in entry:
                    self.add(file, key, "an include entry needs `path` (git includes are not supported: "
                                        "the validator and the sites must work offline)")
                    continue
                optional = bool(entry.get("optional", False))
                raw = entry["path"]
            else:
                raw = entry
            if not isinstance(raw, str) or not raw:
                self.add(file, key, f"an include is a path, not {_type_name(raw)}")
                continue
            if re.match(r"^[a-z]+://", raw):
                self.add(file, key, f"remote include {raw!r}: not supported (offline validation)")
                continue
            if _SITE_VAR_RE.search(raw):
                has_site = True
                before = _SITE_VAR_RE.split(raw, maxsplit=1)[0]
                base = Path(os.path.normpath(env_dir / before)) if before else env_dir
                if not self._inside(file, key, raw, base):
                    continue
                sites = subdirectories(base) if path_state(base) == DIRECTORY else []
                if sites is None:
                    self.add(file, key, f"{raw!r}: {_display(base)} {_listing(base)[1]}")
                    continue
                if not sites:
                    self.add(file, key, f"{raw!r}: no site directory under {_display(base)} to stand for "
                                        f"${SITE_VAR}")
                    continue
                for site in sites:
                    target = Path(os.path.normpath(env_dir / _SITE_VAR_RE.sub(site, raw)))
                    if path_state(target) == DIRECTORY and self._inside(file, key, raw, target):
                        declarations[site] = self.check_site_declaration(target)
                    configs = self._include_target(file, key, raw, target, optional, site=True, site_name=site)
                    if configs is not None:
                        resolved.append((site, configs))
                continue
            other = _OTHER_VAR_RE.search(raw)
            if other:
                self.add(file, key, f"{raw!r} uses ${other.group(1)}, which the validator cannot resolve: "
                                    f"only ${SITE_VAR} is supported in include paths")
                continue
            target = Path(os.path.normpath(env_dir / os.path.expanduser(raw)))
            configs = self._include_target(file, key, raw, target, optional, site=False, site_name=None)
            if configs is not None:
                resolved.append((None, configs))
        if not has_site:
            self.add(file, "spack.include", f"no site include (e.g. ../sites/${SITE_VAR}): compilers, "
                                            "externals and targets come from sites/<site>/")
        return resolved

    def _inside(self, file: str, key: str, raw: str, target: Path) -> bool:
        """Whether `target` (symbolic links followed) is inside the tree; a finding naming it if not."""
        real = Path(os.path.realpath(target))
        if real == self.root or self.root in real.parents:
            return True
        self.add(file, key, f"{raw!r} leads outside the environment tree {_display(self.root)} "
                            f"({_display(real)}): not read")
        return False

    def _include_target(self, file: str, key: str, raw: str, target: Path, optional: bool, *,
                        site: bool, site_name: str | None) -> list[_ConfigFile] | None:
        if not self._inside(file, key, raw, target):
            return None
        state = path_state(target)
        if state == DIRECTORY:
            state = _listing(target)[1] or state
        if state not in (DIRECTORY, FILE, OTHER):
            if not (optional and state == "does not exist"):  # an optional include may be absent, not broken
                for_site = f" for {SITE_VAR}={site_name}" if site_name else ""
                self.add(file, key, f"included path {raw!r} {state}{for_site} ({_display(target)})")
            return None
        files = [target / name for name in DIRECTORY_SECTION_FILES if path_state(target / name) == FILE] \
            if state == DIRECTORY else [target]
        configs = []
        for included in files:
            if not self._inside(file, key, raw, included):
                continue
            data = self.check_config_file(included, site=site)
            if data is not None:
                configs.append(_ConfigFile(_display(included), "", data, site=site))
        return configs

    def _check_stacks(self, file: str, env: dict[str, Any], configs: list[_ConfigFile],
                      expanded: list[str], site: str | None) -> None:
        mpis: dict[str, str] = {}
        for spec in expanded:
            try:
                nodes = parse_spec(spec)
            except SpecSyntaxError:
                continue  # reported where the pieces are written
            merged = merge_nodes(nodes)
            in_spec = sorted({n.name for n in merged if n.name and self.table.is_mpi(n.name)})
            if len(in_spec) > 1:
                self.add(file, "spack.specs", f"'{spec}': more than one MPI in one spec ({words(in_spec)})")
            for node in merged:
                if node.name and self.table.is_mpi(node.name):
                    mpis.setdefault(node.signature(), spec)
                if node.name and self.table.known(node.name) and len([n for n in nodes if n.name == node.name]) > 1:
                    for problem in check_node(node, self.table):
                        if "conflict" in problem:
                            self.add(file, "spack.specs", f"'{spec}': {problem}")
        if len(mpis) < 2:
            return
        unify, unify_file, unify_key, default = True, file, "spack.concretizer.unify", " (the default)"
        for config in configs:
            concretizer = config.data.get("concretizer")
            if isinstance(concretizer, dict) and "unify" in concretizer:
                unify, default = concretizer["unify"], ""
                unify_file, unify_key = config.file, f"{config.prefix}concretizer.unify"
                break
        if unify is True:
            self.add(unify_file, unify_key,
                     f"unify: true{default} across {len(mpis)} MPI stacks ({words(sorted(mpis))}): "
                     "Spack's solver cannot unify different MPIs (it fails with an internal error); "
                     "set `unify: false`")


    # -- fabric rules (scalebench/data/spack_fabrics.yaml) --------------------------------------

    def check_site_declaration(self, site_dir: Path) -> dict[str, str]:
        """The valid keys of a site directory's site.yaml; a finding per problem (once per file)."""
        path = site_dir / SITE_FILE
        file = _display(path)
        if file in self._declarations:
            return self._declarations[file]
        choices = {"fabric": self.rules.fabrics, "scheduler": self.rules.schedulers}
        spelled = "; ".join(f"{key}: {' | '.join(known)}" for key, known in choices.items())
        declared: dict[str, str] = {}
        state = path_state(path)
        data, error = _load_yaml(path) if state == FILE else ({}, None)
        if state != FILE:
            problem = "missing" if state == "does not exist" else state
            self.add(file, "<file>", f"{problem}: every site declares its fabric class and scheduler, which "
                                     f"the stack rules need ({spelled})")
        elif error:
            self.add(file, "<yaml>", error)
        elif not isinstance(data, dict):
            self.add(file, "<root>", f"a mapping of {words(SITE_KEYS)}, not {_type_name(data)}")
        else:
            for key in data:
                if key not in SITE_KEYS:
                    self.add(file, str(key), _unknown_key(key, SITE_KEYS, SITE_FILE))
            for key, known in choices.items():
                value = data.get(key)
                if isinstance(value, str) and value in known:
                    declared[key] = value
                else:
                    problem = "missing" if value is None else f"unknown {key} {value!r}"
                    self.add(file, key, f"{problem}: one of {words(known)}")
        self._declarations[file] = declared
        return declared

    def _check_fabric(self, file: str, name: str, configs: list[_ConfigFile], expanded: list[str],
                      site: str | None, declared: dict[str, str],
                      unmet_by_name: dict[tuple[str, str, str], set[str]]) -> None:
        """A stack named <mpi>-<transport> requests what its name, its site's fabric and its site's
        scheduler require. Findings of the name's rules wait in `unmet_by_name` (by site)."""
        stack = self.rules.stack(name)
        if stack is None:
            return
        mpi, transport = stack
        nodes: dict[str, list[Node]] = {}
        for spec in expanded:
            try:
                merged = merge_nodes(parse_spec(spec))
            except SpecSyntaxError:
                continue  # reported where the pieces are written
            for node in merged:
                nodes.setdefault(node.name or "", []).append(node)
        if mpi not in nodes:
            unmet_by_name.setdefault((file, "spack.specs", f"{name}: no {mpi} in its specs: the name says "
                                                           f"{mpi} over {transport}"), set()).add(site or "")
            return
        sections = [(c.file, c.prefix, c.data["packages"]) for c in configs
                    if isinstance(c.data.get("packages"), dict)]
        fabric, scheduler = declared.get("fabric"), declared.get("scheduler")
        on_fabric = self.rules.fabrics[fabric].get(transport) if fabric else None
        # (rule, where: None for the name's rules, else the site and why; for whom, if an external fails)
        checks = [(rule, None, name) for rule in self.rules.transports[transport][mpi]]
        checks += [(rule, f"site {site} ({fabric})", f"{transport} stacks") for rule in on_fabric or []]
        checks += [(rule, f"site {site} (scheduler {scheduler})", "every stack")
                   for rule in (self.rules.schedulers[scheduler] if scheduler else [])
                   if rule.package == mpi or not self.table.is_mpi(rule.package)]
        for rule, where, whom in checks:
            package = rule.package
            externals = externals_only(package, sections)
            if externals is not None:  # Spack must pick one of these: each must qualify
                for external in externals:
                    missing = unmet(rule.node, [external.node], self.table, package, built=False)
                    if missing:
                        self.add(external.file, external.key, f"{where or 'stack ' + name}: {package} external "
                                                              f"{_lacks(missing)}; needed by {whom}")
                continue
            missing = unmet(rule.node, nodes.get(package, []) + required_nodes(package, sections),
                            self.table, package)
            if not missing:
                continue
            if where:
                self.add(file, "spack.specs", f"{name} on {where}: {package} {_lacks(missing)}: request it in "
                                              f"the stack's specs or require it in sites/{site}/packages.yaml")
            else:
                unmet_by_name.setdefault((file, "spack.specs", f"{name}: {package} {_lacks(missing)}: the name "
                                                               f"says {transport}"), set()).add(site or "")
        for package in self.rules.external[fabric] if on_fabric is not None and fabric else []:
            if any(rule.package == package for rule in on_fabric) and not externals_only(package, sections):
                self.add(file, "spack.specs", f"{name} on site {site} ({fabric}): {package} must be the "
                                              "site's own: an external with buildable: false, never built")


def _lacks(missing) -> str:
    """'lacks +verbs +rc (has ~verbs ~rc)'."""
    return (f"lacks {' '.join(spell(v, wanted) for v, wanted, _ in missing)} "
            f"(has {' '.join(spell(v, have) for v, _, have in missing)})")


def _with_sites(failing: set[str], sites: list[str]) -> str:
    """' with SCALEBENCH_SPACK_SITE=a,b' when a finding holds for some sites only."""
    if sites and set(failing) != set(sites):
        return f" with {SITE_VAR}={','.join(sorted(failing))}"
    return ""


def validate_env(path, table: PackageTable | None = None) -> list[Finding]:
    """Findings for one environment (a spack.yaml or its directory) and the files it includes, which
    must be inside the parent of the environment's directory (as spack_envs/ holds common/, sites/)."""
    path = Path(path)
    env_dir = path if path.is_dir() else path.parent
    validator = _Validator(table or load_table(), Path(os.path.abspath(env_dir)).parent)
    validator.check_env(path)
    return validator.findings


def find_envs(directory, unreadable: list[tuple[str, str]] | None = None) -> list[Path]:
    """spack.yaml files under a directory (not inside .spack-env/); each directory that cannot be read
    is appended to `unreadable` as (path, why)."""
    return [p for p in _yaml_files(Path(directory), unreadable) if p.name == "spack.yaml"]


def validate_tree(directory=None, table: PackageTable | None = None) -> list[Finding]:
    """Findings for every environment under a directory (default: the repo's spack_envs/), and
    for every other YAML file there, site files (under sites/) checked as such."""
    directory = Path(directory) if directory is not None else paths.SPACK_ENVS
    validator = _Validator(table or load_table(), directory)
    state = path_state(directory)
    if state != DIRECTORY:
        validator.add(_display(directory), "<dir>", "no such directory" if state in (FILE, OTHER) else state)
        return validator.findings
    unreadable: list[tuple[str, str]] = []
    files = _yaml_files(directory, unreadable)
    for path, why in unreadable:  # its environments and files are not validated: said, never skipped silently
        validator.add(path, "<dir>", f"{why}: what it holds is not validated")
    envs = [p for p in files if p.name == "spack.yaml"]
    if not envs and not unreadable:
        validator.add(_display(directory), "<dir>", "no environment (spack.yaml) under this directory")
    for env in envs:
        validator.check_env(env)
    for other in files:
        relative = other.relative_to(directory).parts
        if other.name in ("spack.yaml", "spack.lock") or ".spack-env" in relative:
            continue
        if not validator._inside(_display(other), "<file>", _display(other), other):
            continue
        if other.name == SITE_FILE and relative[:-2] == ("sites",):
            validator.check_site_declaration(other.parent)
        else:
            validator.check_config_file(other, site="sites" in relative[:-1])
    return validator.findings
