"""Stacks that are what their names and sites say: the fabric rules of `scalebench spack validate`.

The rules are data (scalebench/data/spack_fabrics.yaml): what the transport word of a stack's name
(`openmpi-ucx`: ucx), the fabric class of its site and the site's scheduler require of the stack's
packages. A site declares its class and scheduler in sites/<site>/site.yaml (`SITE_FILE`), which
Spack never reads: an included directory contributes only its <section>.yaml files.

This module holds the rules and what a stack requests of a package; scalebench.spack.validate
applies them to each environment and site and reports one finding per unmet rule.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from scalebench import loaders, paths
from scalebench.errors import InputError
from scalebench.spack.specs import (FALSE_WORDS, TRUE_WORDS, Node, PackageTable, SpecSyntaxError, check_node,
                                    load_table, parse_spec, words)

RULES_PATH = paths.PACKAGE_DATA / "spack_fabrics.yaml"
#: scalebench's declaration of a site's fabric class and scheduler, in sites/<site>/.
SITE_FILE = "site.yaml"
SITE_KEYS = ("fabric", "scheduler")


@dataclass(frozen=True)
class Rule:
    """One rule: a spec naming a package and the variants it must have."""

    text: str
    node: Node

    @property
    def package(self) -> str:
        return self.node.name or ""


class FabricRules:
    """The rules of scalebench/data/spack_fabrics.yaml, checked against the package table."""

    def __init__(self, data: Any, table: PackageTable, source: str = str(RULES_PATH)) -> None:
        self.source = source
        self.table = table
        if not isinstance(data, dict):
            raise InputError(f"{source}: needs `transports:`, `fabrics:` and `schedulers:` mappings")
        transports = self._mapping(data, "transports")
        self.transports: dict[str, dict[str, list[Rule]]] = {
            transport: {mpi: self._rules(f"transports.{transport}.{mpi}", rules)
                        for mpi, rules in self._mapping(transports, transport, "transports.").items()}
            for transport in transports}
        self.fabrics: dict[str, dict[str, list[Rule]]] = {}
        self.external: dict[str, list[str]] = {}
        for fabric, entry in self._mapping(data, "fabrics").items():
            key = f"fabrics.{fabric}"
            unknown = set(self._mapping({fabric: entry}, fabric, "fabrics.")) - {"require", "external"}
            if unknown:
                raise InputError(f"{source}: {key}: unknown key(s) {words(sorted(unknown))}")
            require = self._mapping(entry, "require", f"{key}.")
            for transport in require:
                if transport not in self.transports:
                    raise InputError(f"{source}: {key}.require.{transport}: not a transport "
                                     f"({words(self.transports)})")
            self.fabrics[fabric] = {transport: self._rules(f"{key}.require.{transport}", rules)
                                    for transport, rules in require.items()}
            self.external[fabric] = [str(name) for name in entry.get("external") or []]
            for name in self.external[fabric]:
                if not table.known(name):
                    raise InputError(f"{source}: {key}.external: unknown package '{name}'")
        self.schedulers: dict[str, list[Rule]] = {
            name: self._rules(f"schedulers.{name}", rules)
            for name, rules in self._mapping(data, "schedulers").items()}

    def _mapping(self, data: dict[str, Any], key: str, prefix: str = "") -> dict[str, Any]:
        value = data.get(key)
        if not isinstance(value, dict):
            raise InputError(f"{self.source}: {prefix}{key} must be a mapping")
        return value

    def _rules(self, key: str, items: Any) -> list[Rule]:
        if not isinstance(items, list):
            raise InputError(f"{self.source}: {key} must be a list of specs")
        rules = []
        for index, text in enumerate(items):
            try:
                node = parse_spec(text)
            except SpecSyntaxError as exc:
                raise InputError(f"{self.source}: {key}[{index}]: {exc}") from None
            problems = [] if len(node) == 1 and node[0].name else ["one named package per rule"]
            problems += check_node(node[0], self.table)
            if problems:
                raise InputError(f"{self.source}: {key}[{index}] '{text}': {'; '.join(problems)}")
            rules.append(Rule(text, node[0]))
        return rules

    def stack(self, name: str) -> tuple[str, str] | None:
        """(mpi, transport) of an environment named <mpi>-<transport> with rules, else None."""
        mpi, _, transport = name.rpartition("-")
        return (mpi, transport) if mpi in self.transports.get(transport, {}) else None


_RULES: dict[str, FabricRules] = {}


def load_rules(path: Path | None = None) -> FabricRules:
    """The rules (cached per path), checked against the default package table."""
    path = Path(path) if path else RULES_PATH
    key = str(path.resolve())
    if key not in _RULES:
        _RULES[key] = FabricRules(loaders.load_yaml(path, "fabric rules"), load_table(), str(path))
    return _RULES[key]


# ---------------------------------------------------------------------------------------------
# What a stack requests of a package


#: A package section of a config file: (file, key prefix of `packages`, the mapping).
PackagesSection = tuple[str, str, dict[str, Any]]


@dataclass(frozen=True)
class External:
    file: str
    key: str
    node: Node


def required_nodes(package: str, sections: Iterable[PackagesSection]) -> list[Node]:
    """The nodes of `packages: <package>: require:` entries that always apply (a spec string, or a
    `spec:` without `when`); `one_of`/`any_of` alternatives guarantee nothing, so they do not count."""
    nodes = []
    for _file, _prefix, packages in sections:
        settings = packages.get(package)
        require = settings.get("require") if isinstance(settings, dict) else None
        for item in [require] if isinstance(require, str) else require if isinstance(require, list) else []:
            text = item if isinstance(item, str) else item.get("spec") if isinstance(item, dict) \
                and "when" not in item else None
            try:
                root = parse_spec(text)[0] if isinstance(text, str) else None
            except SpecSyntaxError:
                continue  # reported where it is written
            if root is not None and root.name in (None, package):
                nodes.append(root)
    return nodes


def externals_only(package: str, sections: Sequence[PackagesSection]) -> list[External] | None:
    """The externals of a package that is `buildable: false` (what Spack must pick from), else None."""
    if not any(isinstance(p.get(package), dict) and p[package].get("buildable") is False
               for _f, _k, p in sections):
        return None
    found = []
    for file, prefix, packages in sections:
        externals = packages.get(package, {}).get("externals") if isinstance(packages.get(package), dict) else None
        for index, external in enumerate(externals if isinstance(externals, list) else []):
            try:
                root = parse_spec(external["spec"])[0]
            except (SpecSyntaxError, KeyError, TypeError):
                continue
            found.append(External(file, f"{prefix}packages.{package}.externals[{index}].spec", root))
    return found


def _bool(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple("true" if v in TRUE_WORDS else "false" if v in FALSE_WORDS else v for v in values)


def _default(table: PackageTable, package: str, variant: str) -> tuple[str, ...]:
    spec = (table.variants(package) or {}).get(variant, {})
    default = spec.get("default")
    if isinstance(default, bool):
        return ("true",) if default else ("false",)
    return tuple(str(default).split(",")) if default is not None else ()


def unmet(rule: Node, nodes: Sequence[Node], table: PackageTable, package: str, *, built: bool = True
          ) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """The variants of `rule` that `nodes` (everything requesting the package) do not guarantee, as
    (variant, wanted values, values requested or else the default). An external (`built=False`) has
    exactly what it declares."""
    out = []
    for variant, wanted in rule.variants.items():
        wanted = _bool(wanted)
        spec = (table.variants(package) or {}).get(variant, {})
        requested = [_bool(n.variants[variant]) for n in nodes if variant in n.variants]
        have = requested or [_default(table, package, variant)]
        if spec.get("type") == "multi":
            # Requests add up (fabrics=verbs and fabrics=rxm build both), and Spack keeps the default
            # values a build can combine with them (libfabric fabrics=verbs: verbs,sockets,tcp,udp).
            if requested and built:
                exclusive = set(spec.get("exclusive") or [])
                have = have + [tuple(v for v in _default(table, package, variant) if v not in exclusive)]
            union = tuple(dict.fromkeys(v for values in have for v in values))
            if not set(wanted) <= set(union):
                out.append((variant, wanted, union))
        elif any(values != wanted for values in have):
            out.append((variant, wanted, tuple(dict.fromkeys(v for values in have for v in values))))
    return out


def spell(variant: str, values: tuple[str, ...]) -> str:
    """A variant as a spec writes it: +x, ~x (both when requests disagree), x=a,b."""
    if values and set(values) <= {"true", "false"}:
        return " ".join(f"{'+' if value == 'true' else '~'}{variant}" for value in values)
    return f"{variant}={','.join(values)}"
