"""What the offline Spack validator checks in each YAML section (scalebench.spack.validate): spec
strings, spec lists and definitions, concretizer, packages (requirements, providers, externals).

`SectionChecks` is a part of the validator: it needs `add(file, key, message)` and `table`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from scalebench.spack.specs import Node, PackageTable, SpecSyntaxError, check_node, parse_spec, words
from scalebench.validation import did_you_mean

CONCRETIZER_KEYS = ("unify", "reuse", "targets", "duplicates", "timeout", "error_on_timeout",
                    "concretization_cache", "static_analysis", "splice", "enable_node_namespace",
                    "force", "compiler_mixing", "os_compatible")
PACKAGE_KEYS = ("require", "prefer", "conflict", "version", "buildable", "externals", "variants",
                "permissions", "package_attributes")
ALL_PACKAGE_KEYS = ("require", "prefer", "conflict", "target", "compiler", "buildable", "providers",
                    "variants", "permissions", "package_attributes")
EXTERNAL_KEYS = ("spec", "prefix", "modules", "id", "extra_attributes", "dependencies")
REQUIREMENT_KEYS = ("spec", "one_of", "any_of", "when", "message")
#: Spec attributes that pin an architecture: site-specific.
ARCH_ATTRIBUTES = ("target", "os", "platform", "arch")


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "empty"}.get(type(value), type(value).__name__)


def _unknown_key(key: str, allowed: Sequence[str], where: str) -> str:
    return f"unknown key '{key}' in {where}{did_you_mean(str(key), allowed)}; allowed: {words(allowed)}"


_REF_RE = re.compile(r"^\$(?P<sigil>[\^%]?)\{?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}?$")


@dataclass
class _Definition:
    file: str
    key: str           # key path of the definition entry, e.g. definitions[1].mpi
    name: str
    items: list[Any]


class SectionChecks:
    """The checks of one section's value; findings go to `add`."""

    table: PackageTable

    def add(self, file: str, key: str, message: str) -> None:
        raise NotImplementedError

    def check_spec(self, file: str, key: str, text: Any, *, site: bool, package: str | None = None,
                   where: str = "") -> list[Node] | None:
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

    def check_definitions(self, file: str, key: str, value: Any, *, site: bool) -> list[_Definition]:
        found: list[_Definition] = []
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

    def _mapping(self, file: str, key: str, value: Any, allowed: Sequence[str], where: str, shape: str) -> bool:
        """Whether `value` is a mapping (a finding `shape` if not); a finding per key outside `allowed`."""
        if not isinstance(value, dict):
            self.add(file, key, f"{shape}, not {_type_name(value)}")
            return False
        for sub in value:
            if sub not in allowed:
                self.add(file, f"{key}.{sub}", _unknown_key(sub, allowed, where))
        return True

    def check_concretizer(self, file: str, key: str, value: Any, *, site: bool) -> None:
        if not self._mapping(file, key, value, CONCRETIZER_KEYS, "concretizer", "must be a mapping"):
            return
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
        if not self._mapping(file, key, external, EXTERNAL_KEYS, "an external",
                             "an external is a mapping with spec and prefix"):
            return
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
