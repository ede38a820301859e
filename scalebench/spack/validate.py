"""Offline validator of the Spack environments in spack_envs/ (pure Python + PyYAML, no Spack).

What it checks, each problem as a `Finding(file, key, message)`:

- YAML: the file parses, no key is repeated in a mapping.
- Environment structure: a top-level `spack:` mapping holding only the keys of the subset of the
  Spack v1.1 environment schema this project uses (`ENV_KEYS`); `include`, `definitions`, `specs`
  (strings or `{matrix, exclude}`), `concretizer`, `packages`, `view` of the right shapes.
- Includes: each included file or directory exists; `$SCALEBENCH_SPACK_SITE` in an include path is
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
"""
from __future__ import annotations

import difflib
import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from scalebench import loaders, paths
from scalebench.errors import InputError
from scalebench.spack.specs import (Node, PackageTable, SpecSyntaxError, check_node, load_table, merge_nodes, parse_spec,
                                    satisfies, words)

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
CONCRETIZER_KEYS = ("unify", "reuse", "targets", "duplicates", "timeout", "error_on_timeout",
                    "concretization_cache", "static_analysis", "splice", "enable_node_namespace",
                    "force", "compiler_mixing", "os_compatible")
PACKAGE_KEYS = ("require", "prefer", "conflict", "version", "buildable", "externals", "variants",
                "permissions", "package_attributes")
ALL_PACKAGE_KEYS = ("require", "prefer", "conflict", "target", "compiler", "buildable", "providers",
                    "variants", "permissions", "package_attributes")
EXTERNAL_KEYS = ("spec", "prefix", "modules", "id", "extra_attributes", "dependencies")
REQUIREMENT_KEYS = ("spec", "one_of", "any_of", "when", "message")
#: key=value pairs of a spec that are not variants.
#: Spec attributes that pin an architecture: site-specific.
ARCH_ATTRIBUTES = ("target", "os", "platform", "arch")
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


def _load_yaml(path: Path) -> Tuple[Any, Optional[str]]:
    """(data, None), or (None, the reason without the path: a Finding names the file)."""
    try:
        return loaders.load_yaml(path, "spack file", unique_keys=True), None
    except InputError as exc:
        return None, str(exc).replace(f"{path}: ", "", 1)


# ---------------------------------------------------------------------------------------------
# Validation


def _display(path: Path) -> str:
    return os.path.normpath(str(path))


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "empty"}.get(type(value), type(value).__name__)


def _unknown_key(key: str, allowed: Sequence[str], where: str) -> str:
    close = difflib.get_close_matches(str(key), allowed, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"unknown key '{key}' in {where}{hint}; allowed: {words(allowed)}"


_REF_RE = re.compile(r"^\$(?P<sigil>[\^%]?)\{?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}?$")


@dataclass
class _Definition:
    file: str
    key: str           # key path of the definition entry, e.g. definitions[1].mpi
    name: str
    items: List[Any]


@dataclass
class _ConfigFile:
    """What a file contributes to an environment (the env's own file or an include)."""

    file: str
    prefix: str        # key path prefix: 'spack.' for the env, '' for an included file
    data: Dict[str, Any]
    site: bool


class _Validator:
    def __init__(self, table: PackageTable) -> None:
        self.table = table
        self.findings: List[Finding] = []
        self._seen: Set[Finding] = set()
        self._checked_files: Dict[Tuple[str, bool], Optional[Dict[str, Any]]] = {}

    def add(self, file: str, key: str, message: str) -> None:
        finding = Finding(file, key, message)
        if finding not in self._seen:
            self._seen.add(finding)
            self.findings.append(finding)

    # -- spec strings -------------------------------------------------------------------------

    def check_spec(self, file: str, key: str, text: Any, *, site: bool, package: Optional[str] = None,
                   where: str = "") -> Optional[List[Node]]:
        if not isinstance(text, str):
            self.add(file, key, f"a spec must be a string, not {_type_name(text)}")
            return None
        if text.strip() == "":
            self.add(file, key, "empty spec")
            return None
        if text.lstrip().startswith("$"):
            self.add(file, key, f"'{text}': not a reference: write $name, $^name or $%name (letters, "
                                "digits, _) as a whole entry of a definition or a matrix row")
            return None
        try:
            nodes = parse_spec(text)
        except SpecSyntaxError as exc:
            self.add(file, key, f"spec does not parse: {exc}")
            return None
        for node in nodes:
            for problem in check_node(node, self.table, package if node is nodes[0] else None):
                self.add(file, key, f"'{text}': {problem}")
            if not site:
                for attr in ARCH_ATTRIBUTES:
                    if attr in node.attributes:
                        self.add(file, key, f"'{text}': {attr}={node.attributes[attr]} is site-specific: "
                                            f"set it in sites/<site>/ (packages.yaml), not in a shared env")
                if node.edge in ("%", "%%") and node.version:
                    self.add(file, key, f"'{text}': compiler version %{node.name}@{node.version} is "
                                        "site-specific: declare the compiler in sites/<site>/packages.yaml")
        return nodes

    # -- sections ------------------------------------------------------------------------------

    def check_spec_list(self, file: str, key: str, items: Any, *, site: bool) -> None:
        """A list of specs (definitions values, `specs`): strings, $references or matrices."""
        if not isinstance(items, list):
            self.add(file, key, f"must be a list of specs, not {_type_name(items)}")
            return
        for index, item in enumerate(items):
            item_key = f"{key}[{index}]"
            if item is None:
                continue
            if isinstance(item, str):
                if not _REF_RE.match(item.strip()):
                    self.check_spec(file, item_key, item, site=site)
                continue
            if isinstance(item, dict):
                for bad in sorted(set(item) - {"matrix", "exclude"}, key=str):
                    self.add(file, item_key, _unknown_key(bad, ["matrix", "exclude"], "a spec list entry"))
                matrix = item.get("matrix")
                if not isinstance(matrix, list) or not matrix:
                    self.add(file, f"{item_key}.matrix", "a matrix is a non-empty list of lists of specs")
                else:
                    for row_index, row in enumerate(matrix):
                        row_key = f"{item_key}.matrix[{row_index}]"
                        if not isinstance(row, list) or not row:
                            self.add(file, row_key, f"a matrix row must be a non-empty list, "
                                                    f"not {_type_name(row)}")
                            continue
                        for col, entry in enumerate(row):
                            entry_key = f"{row_key}[{col}]"
                            if isinstance(entry, str) and _REF_RE.match(entry.strip()):
                                continue
                            self.check_spec(file, entry_key, entry, site=site)
                excludes = item.get("exclude", [])
                if not isinstance(excludes, list):
                    self.add(file, f"{item_key}.exclude", "must be a list of specs")
                else:
                    for ex_index, entry in enumerate(excludes):
                        self.check_spec(file, f"{item_key}.exclude[{ex_index}]", entry, site=site)
                continue
            self.add(file, item_key, f"a spec list entry is a string or a matrix, not {_type_name(item)}")

    def check_definitions(self, file: str, key: str, value: Any, *, site: bool) -> List[_Definition]:
        found: List[_Definition] = []
        if not isinstance(value, list):
            self.add(file, key, f"must be a list of one-key mappings (name: [specs]), not {_type_name(value)}")
            return found
        for index, entry in enumerate(value):
            entry_key = f"{key}[{index}]"
            if not isinstance(entry, dict):
                self.add(file, entry_key, f"a definition is a mapping name: [specs], not {_type_name(entry)}")
                continue
            names = [k for k in entry if k != "when"]
            if "when" in entry and not isinstance(entry["when"], str):
                self.add(file, f"{entry_key}.when", "must be a string (a Python condition)")
            if len(names) != 1:
                self.add(file, entry_key, f"a definition has exactly one name (and an optional `when`), "
                                          f"found {len(names)}: {words(names)}")
            for name in names:
                if not isinstance(name, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
                    self.add(file, f"{entry_key}.{name}", "a definition name is letters, digits and _")
                    continue
                self.check_spec_list(file, f"{entry_key}.{name}", entry[name], site=site)
                items = entry[name] if isinstance(entry[name], list) else []
                found.append(_Definition(file, f"{entry_key}.{name}", name, items))
        return found

    def check_concretizer(self, file: str, key: str, value: Any, *, site: bool) -> None:
        if not isinstance(value, dict):
            self.add(file, key, f"must be a mapping, not {_type_name(value)}")
            return
        for sub in value:
            if sub not in CONCRETIZER_KEYS:
                self.add(file, f"{key}.{sub}", _unknown_key(sub, CONCRETIZER_KEYS, "concretizer"))
        if "unify" in value and value["unify"] not in (True, False, "when_possible"):
            self.add(file, f"{key}.unify", f"must be true, false or when_possible, not {value['unify']!r}")
        if "targets" in value:
            targets = value["targets"]
            if not site:
                self.add(file, f"{key}.targets", "targets are site-specific: set them in "
                                                 "sites/<site>/concretizer.yaml, not in a shared env")
            if not isinstance(targets, dict):
                self.add(file, f"{key}.targets", f"must be a mapping, not {_type_name(targets)}")
            else:
                for sub, sub_value in targets.items():
                    if sub == "host_compatible" and not isinstance(sub_value, bool):
                        self.add(file, f"{key}.targets.host_compatible", "must be true or false")
                    elif sub == "granularity" and sub_value not in ("generic", "microarchitectures"):
                        self.add(file, f"{key}.targets.granularity",
                                 "must be generic or microarchitectures")
                    elif sub not in ("host_compatible", "granularity"):
                        self.add(file, f"{key}.targets.{sub}",
                                 _unknown_key(sub, ["host_compatible", "granularity"], "concretizer.targets"))

    def _check_requirement_list(self, file: str, key: str, value: Any, package: str, *, site: bool) -> None:
        pkg = None if package == "all" else package
        if isinstance(value, str):
            self.check_spec(file, key, value, site=site, package=pkg)
            return
        if not isinstance(value, list):
            self.add(file, key, f"must be a spec string or a list, not {_type_name(value)}")
            return
        for index, item in enumerate(value):
            item_key = f"{key}[{index}]"
            if isinstance(item, str):
                self.check_spec(file, item_key, item, site=site, package=pkg)
            elif isinstance(item, dict):
                for sub in item:
                    if sub not in REQUIREMENT_KEYS:
                        self.add(file, f"{item_key}.{sub}", _unknown_key(sub, REQUIREMENT_KEYS, "a requirement"))
                for sub in ("spec", "when"):
                    if sub in item:
                        self.check_spec(file, f"{item_key}.{sub}", item[sub], site=site, package=pkg)
                for sub in ("one_of", "any_of"):
                    if sub in item:
                        if not isinstance(item[sub], list):
                            self.add(file, f"{item_key}.{sub}", "must be a list of specs")
                            continue
                        for j, spec in enumerate(item[sub]):
                            self.check_spec(file, f"{item_key}.{sub}[{j}]", spec, site=site, package=pkg)
            else:
                self.add(file, item_key, f"a requirement is a spec string or a mapping, not {_type_name(item)}")

    def check_packages(self, file: str, key: str, value: Any, *, site: bool) -> None:
        if not isinstance(value, dict):
            self.add(file, key, f"must be a mapping of package names, not {_type_name(value)}")
            return
        for package, settings in value.items():
            pkey = f"{key}.{package}"
            if package != "all" and not self.table.known(str(package)):
                self.add(file, pkey, f"unknown package '{package}'{self.table.suggest(str(package))}: "
                                     f"not in {Path(self.table.source).name}")
                continue
            if not isinstance(settings, dict):
                self.add(file, pkey, f"must be a mapping, not {_type_name(settings)}")
                continue
            allowed = ALL_PACKAGE_KEYS if package == "all" else PACKAGE_KEYS
            for sub in settings:
                if sub not in allowed:
                    self.add(file, f"{pkey}.{sub}", _unknown_key(sub, allowed, f"packages.{package}"))
            for sub in ("require", "prefer", "conflict", "variants"):
                if sub in settings:
                    self._check_requirement_list(file, f"{pkey}.{sub}", settings[sub], package, site=site)
            if "buildable" in settings and not isinstance(settings["buildable"], bool):
                self.add(file, f"{pkey}.buildable", "must be true or false")
            if "version" in settings and not isinstance(settings["version"], list):
                self.add(file, f"{pkey}.version", "must be a list of versions")
            if package == "all":
                if "target" in settings and not site:
                    self.add(file, f"{pkey}.target", "targets are site-specific: set them in sites/<site>/")
                providers = settings.get("providers", {})
                if not isinstance(providers, dict):
                    self.add(file, f"{pkey}.providers", "must be a mapping virtual: [packages]")
                else:
                    for virtual, names in providers.items():
                        vkey = f"{pkey}.providers.{virtual}"
                        if not self.table.known(str(virtual)):
                            self.add(file, vkey, f"unknown virtual '{virtual}'{self.table.suggest(str(virtual))}")
                            continue
                        if not isinstance(names, list):
                            self.add(file, vkey, "must be a list of package names")
                            continue
                        for j, spec in enumerate(names):
                            nodes = self.check_spec(file, f"{vkey}[{j}]", spec, site=site)
                            if nodes and nodes[0].name and self.table.known(nodes[0].name) and \
                                    not self.table.provides(nodes[0].name, str(virtual)):
                                self.add(file, f"{vkey}[{j}]", f"'{nodes[0].name}' does not provide "
                                                                f"'{virtual}'")
            externals = settings.get("externals")
            if externals is not None:
                if not site:
                    self.add(file, f"{pkey}.externals", "externals are site-specific: declare them in "
                                                        "sites/<site>/packages.yaml, not in a shared env")
                if not isinstance(externals, list):
                    self.add(file, f"{pkey}.externals", "must be a list of {spec, prefix}")
                else:
                    for index, external in enumerate(externals):
                        self._check_external(file, f"{pkey}.externals[{index}]", external, str(package),
                                             site=site)
            if settings.get("buildable") is False and package != "all" and not externals and \
                    not self.table.is_virtual(str(package)):
                self.add(file, f"{pkey}.buildable", f"buildable: false and no externals: nothing can "
                                                    f"provide {package}")

    def _check_external(self, file: str, key: str, external: Any, package: str, *, site: bool) -> None:
        if not isinstance(external, dict):
            self.add(file, key, f"an external is a mapping with spec and prefix, not {_type_name(external)}")
            return
        for sub in external:
            if sub not in EXTERNAL_KEYS:
                self.add(file, f"{key}.{sub}", _unknown_key(sub, EXTERNAL_KEYS, "an external"))
        if "spec" not in external:
            self.add(file, key, "an external needs `spec`")
        else:
            nodes = self.check_spec(file, f"{key}.spec", external["spec"], site=True)
            if nodes:
                root = nodes[0]
                if root.name != package:
                    self.add(file, f"{key}.spec", f"the external's spec names '{root.name}', "
                                                  f"listed under packages.{package}")
                if not root.version:
                    self.add(file, f"{key}.spec", "an external spec needs an exact version "
                                                  f"({package}@X.Y.Z)")
                if len(nodes) > 1:
                    self.add(file, f"{key}.spec", "an external spec has no dependencies (^...)")
        if "prefix" not in external and "modules" not in external:
            self.add(file, key, "an external needs `prefix` (or `modules`)")
        elif "prefix" in external and not isinstance(external["prefix"], str):
            self.add(file, f"{key}.prefix", "must be a path")

    # -- files ---------------------------------------------------------------------------------

    def check_config_file(self, path: Path, *, site: bool) -> Optional[Dict[str, Any]]:
        """An included file of config sections; returns its data (None when unusable)."""
        file = _display(path)
        cache_key = (file, site)
        if cache_key in self._checked_files:
            return self._checked_files[cache_key]
        data, error = _load_yaml(path)
        result: Optional[Dict[str, Any]] = None
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

    def _check_section(self, file: str, key: str, section: str, value: Any, *, site: bool) -> None:
        if section == "definitions":
            self.check_definitions(file, key, value, site=site)
        elif section == "packages":
            self.check_packages(file, key, value, site=site)
        elif section == "concretizer":
            self.check_concretizer(file, key, value, site=site)
        elif section == "compilers":
            if not site:
                self.add(file, key, "compilers are site-specific: declare them in sites/<site>/")
            elif not isinstance(value, list):
                self.add(file, key, "must be a list")
        elif section == "view":
            if not isinstance(value, (bool, str, dict)):
                self.add(file, key, f"must be true, false, a path or a mapping, not {_type_name(value)}")
        elif section in ("config", "modules", "mirrors", "env_vars", "toolchains"):
            if not isinstance(value, dict):
                self.add(file, key, f"must be a mapping, not {_type_name(value)}")

    def check_env(self, path: Path) -> None:
        path = Path(path)
        if path.is_dir():
            path = path / "spack.yaml"
        file = _display(path)
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
        own_definitions: List[_Definition] = []
        if "definitions" in env:
            own_definitions = self.check_definitions(file, "spack.definitions", env["definitions"], site=False)
        if "specs" not in env or not env["specs"]:
            self.add(file, "spack.specs", "no specs: an environment lists what it builds")
        else:
            self.check_spec_list(file, "spack.specs", env["specs"], site=False)

        includes = self._resolve_includes(file, path.parent, env.get("include", []))
        sites = sorted({site for site, _ in includes if site is not None})
        site_runs: List[Optional[str]] = list(sites) if sites else [None]
        undefined: Dict[Tuple[str, str, str], Tuple[List[str], Set[str]]] = {}
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
        for (ref_file, key, ref), (known, missing_sites) in undefined.items():
            if sites and set(missing_sites) != set(sites):
                where = f" with {SITE_VAR}={','.join(sorted(missing_sites))}"
            else:
                where = ""
            self.add(ref_file, key, f"'{ref}' is not defined{where} (defined: {words(sorted(known)) or 'none'})")

    def _definitions_of(self, config: _ConfigFile) -> List[_Definition]:
        found = []
        for index, entry in enumerate(config.data.get("definitions") or []):
            if isinstance(entry, dict):
                for name, items in entry.items():
                    if name != "when" and isinstance(name, str):
                        found.append(_Definition(config.file, f"definitions[{index}].{name}", name,
                                                 items if isinstance(items, list) else []))
        return found

    def _resolve_includes(self, file: str, env_dir: Path, entries: Any
                          ) -> List[Tuple[Optional[str], List[_ConfigFile]]]:
        """[(site or None, config files it contributes)], in include order."""
        resolved: List[Tuple[Optional[str], List[_ConfigFile]]] = []
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
                sites = sorted(p.name for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")) \
                    if base.is_dir() else []
                if not sites:
                    self.add(file, key, f"{raw!r}: no site directory under {_display(base)} to stand for "
                                        f"${SITE_VAR}")
                    continue
                for site in sites:
                    target = Path(os.path.normpath(env_dir / _SITE_VAR_RE.sub(site, raw)))
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

    def _include_target(self, file: str, key: str, raw: str, target: Path, optional: bool, *,
                        site: bool, site_name: Optional[str]) -> Optional[List[_ConfigFile]]:
        if not target.exists():
            if not optional:
                for_site = f" for {SITE_VAR}={site_name}" if site_name else ""
                self.add(file, key, f"included path {raw!r} does not exist{for_site} ({_display(target)})")
            return None
        files = [target / name for name in DIRECTORY_SECTION_FILES if (target / name).is_file()] \
            if target.is_dir() else [target]
        configs = []
        for included in files:
            data = self.check_config_file(included, site=site)
            if data is not None:
                configs.append(_ConfigFile(_display(included), "", data, site=site))
        return configs

    # -- expansion and stack checks ------------------------------------------------------------

    def _expand_list(self, file: str, key: str, items: List[Any], defined: Dict[str, List[str]],
                     undefined: Dict, site: Optional[str]) -> List[str]:
        out: List[str] = []
        for index, item in enumerate(items):
            item_key = f"{key}[{index}]"
            if isinstance(item, str):
                out.extend(self._expand_entry(file, item_key, item, defined, undefined, site))
            elif isinstance(item, dict) and isinstance(item.get("matrix"), list):
                rows = []
                for row_index, row in enumerate(item["matrix"]):
                    if not isinstance(row, list):
                        rows = []
                        break
                    values: List[str] = []
                    for col, entry in enumerate(row):
                        if isinstance(entry, str):
                            values.extend(self._expand_entry(file, f"{item_key}.matrix[{row_index}][{col}]",
                                                             entry, defined, undefined, site))
                    rows.append(values)
                excludes = [e for e in item.get("exclude", []) or [] if isinstance(e, str)]
                for combo in itertools.product(*rows) if rows else []:
                    spec = " ".join(combo)
                    if not any(satisfies(spec, ex) for ex in excludes):
                        out.append(spec)
        return out

    def _expand_entry(self, file: str, key: str, entry: str, defined: Dict[str, List[str]],
                      undefined: Dict, site: Optional[str]) -> List[str]:
        match = _REF_RE.match(entry.strip())
        if not match:
            return [entry]
        name, sigil = match.group("name"), match.group("sigil")
        if name not in defined:
            known, missing = undefined.setdefault((file, key, entry.strip()), ([], set()))
            known.extend(n for n in defined if n not in known)
            missing.add(site or "")
            return []
        return [f"{sigil}{value}" if sigil else value for value in defined[name]]

    def _expand(self, file: str, env: Dict[str, Any], definitions: List[_Definition],
                undefined: Dict, site: Optional[str]) -> List[str]:
        defined: Dict[str, List[str]] = {}
        for definition in definitions:
            values = self._expand_list(definition.file, definition.key, definition.items, defined,
                                       undefined, site)
            defined.setdefault(definition.name, []).extend(values)
        specs = env.get("specs") or []
        return self._expand_list(file, "spack.specs", specs if isinstance(specs, list) else [],
                                 defined, undefined, site)

    def _check_stacks(self, file: str, env: Dict[str, Any], configs: List[_ConfigFile],
                      expanded: List[str], site: Optional[str]) -> None:
        mpis: Dict[str, str] = {}
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


def validate_env(path, table: Optional[PackageTable] = None) -> List[Finding]:
    """Findings for one environment (a spack.yaml or its directory) and the files it includes."""
    validator = _Validator(table or load_table())
    validator.check_env(Path(path))
    return validator.findings


def find_envs(directory) -> List[Path]:
    """spack.yaml files under a directory (not inside .spack-env/)."""
    directory = Path(directory)
    return sorted(p for p in directory.rglob("spack.yaml") if ".spack-env" not in p.parts)


def validate_tree(directory=None, table: Optional[PackageTable] = None) -> List[Finding]:
    """Findings for every environment under a directory (default: the repo's spack_envs/), and
    for every other YAML file there, site files (under sites/) checked as such."""
    directory = Path(directory) if directory is not None else paths.REPO_ROOT / "spack_envs"
    validator = _Validator(table or load_table())
    if not directory.is_dir():
        validator.add(_display(directory), "<dir>", "no such directory")
        return validator.findings
    envs = find_envs(directory)
    if not envs:
        validator.add(_display(directory), "<dir>", "no environment (spack.yaml) under this directory")
    for env in envs:
        validator.check_env(env)
    for other in sorted(directory.rglob("*.yaml")):
        relative = other.relative_to(directory).parts
        if other.name in ("spack.yaml", "spack.lock") or ".spack-env" in relative:
            continue
        validator.check_config_file(other, site="sites" in relative[:-1])
    return validator.findings
