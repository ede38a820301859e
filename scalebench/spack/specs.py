"""Spack spec strings and the package table they are checked against, without Spack: the grammar of
Spack v1.1's spack/spec_parser.py, and the packages, virtuals, variants, values and conflicts of
scalebench/data/spack_packages.yaml (spack-packages v2025.11)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from scalebench import loaders, paths
from scalebench.errors import InputError
from scalebench.validation import did_you_mean, excerpt

TABLE_PATH = paths.PACKAGE_DATA / "spack_packages.yaml"

SPEC_ATTRIBUTES = ("target", "os", "platform", "arch", "namespace", "cflags", "cxxflags", "fflags",
                   "cppflags", "ldflags", "ldlibs", "dev_path", "patches", "commit")
TRUE_WORDS = ("true", "True", "TRUE")
FALSE_WORDS = ("false", "False", "FALSE")




# ---------------------------------------------------------------------------------------------
# The data table


class PackageTable:
    """Packages, virtuals, variants and conflicts of scalebench/data/spack_packages.yaml."""

    def __init__(self, data: dict[str, Any], source: str = str(TABLE_PATH)) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("packages"), dict):
            raise InputError(f"{source}: needs a `packages:` mapping")
        self.source = source
        self.packages: dict[str, dict[str, Any]] = {
            name: (entry or {}) for name, entry in data["packages"].items()}
        self.virtuals: dict[str, list[str]] = {
            name: list(providers or []) for name, providers in (data.get("virtuals") or {}).items()}
        for name, entry in self.packages.items():
            for virtual in entry.get("provides", []) or []:
                self.virtuals.setdefault(virtual, [])
                if name not in self.virtuals[virtual]:
                    self.virtuals[virtual].append(name)
            if not isinstance(entry, dict):
                raise InputError(f"{source}: packages.{name} must be a mapping")
        self._conflicts: dict[str, list[tuple["Node", str, str]]] = {}
        for name, entry in self.packages.items():
            parsed = []
            for index, conflict in enumerate(entry.get("conflicts", []) or []):
                try:
                    nodes = parse_spec(conflict["spec"])
                except (SpecSyntaxError, KeyError, TypeError) as exc:
                    raise InputError(f"{source}: packages.{name}.conflicts[{index}]: {exc}") from None
                parsed.append((nodes[0], conflict["spec"], conflict.get("message", "")))
            self._conflicts[name] = parsed

    def known(self, name: str) -> bool:
        return name in self.packages or name in self.virtuals

    def is_virtual(self, name: str) -> bool:
        return name in self.virtuals and name not in self.packages

    def providers(self, virtual: str) -> list[str]:
        return self.virtuals.get(virtual, [])

    def provides(self, package: str, virtual: str) -> bool:
        return package in self.virtuals.get(virtual, [])

    def is_mpi(self, name: str) -> bool:
        return name == "mpi" or name in self.virtuals.get("mpi", [])

    def variants(self, name: str) -> dict[str, dict[str, Any]] | None:
        """The package's variants, or None when the table lists the package by name only."""
        entry = self.packages.get(name)
        if entry is None or "variants" not in entry:
            return None
        return entry["variants"] or {}

    def conflicts(self, name: str) -> list[tuple["Node", str, str]]:
        return self._conflicts.get(name, [])

    def suggest(self, name: str) -> str:
        return did_you_mean(name, set(self.packages) | set(self.virtuals))


_TABLES: dict[str, PackageTable] = {}


def load_table(path: Path | None = None) -> PackageTable:
    """The data table (cached per path)."""
    path = Path(path) if path else TABLE_PATH
    key = str(path.resolve())
    if key not in _TABLES:
        _TABLES[key] = PackageTable(loaders.load_yaml(path, "package table"), source=str(path))
    return _TABLES[key]


# ---------------------------------------------------------------------------------------------
# Spec strings (the grammar of Spack v1.1's spack/spec_parser.py, without reading Spack)


class SpecSyntaxError(ValueError):
    """A spec string that does not parse."""


_IDENT = r"[A-Za-z_0-9][A-Za-z_0-9\-]*"
_NAME = r"[A-Za-z_0-9][A-Za-z_0-9\-.]*"
_VALUE = r"[A-Za-z_0-9\-+*.,:=%^~/\\]+"
_QUOTED = r"'[^']*'|\"[^\"]*\""
_ASSIGN = rf"(?:\s*(?P<{{g}}virtuals>{_IDENT}(?:,{_IDENT})*)=(?P<{{g}}target>{_NAME}))"
_TOKEN_RE = re.compile("|".join([
    rf"(?P<edgeprops>(?:\^|%%|%)\[(?P<props>[^\]]*)\]{_ASSIGN.format(g='p')}?)",
    rf"(?P<edge>(?:\^|%%|%){_ASSIGN.format(g='e')}?)",
    r"(?P<version>@\s*=?[A-Za-z0-9_.:,\-=]+)",
    rf"(?P<propbool>(?:\+\+|~~|--)\s*{_NAME})",
    rf"(?P<bool>[~+\-]\s*{_NAME})",
    rf"(?P<kv>{_NAME}:?==?(?:{_QUOTED}|{_VALUE}))",
    r"(?P<hash>/[A-Za-z_0-9]+)",
    rf"(?P<name>{_NAME}|\*)",
    r"(?P<ws>\s+)",
    r"(?P<bad>.)",
]))
_KV_RE = re.compile(rf"^({_NAME})(:?==?)(.*)$", re.S)


@dataclass
class Node:
    """One node of a spec: the root (edge '') or a dependency ('^') or compiler/direct ('%')."""

    edge: str = ""
    name: str | None = None
    version: str | None = None
    virtuals: tuple[str, ...] = ()
    variants: dict[str, tuple[str, ...]] = field(default_factory=dict)
    bools: set[str] = field(default_factory=set)
    attributes: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        return self.name or "(anonymous)"

    def signature(self) -> str:
        parts = [self.name or ""]
        if self.version:
            parts[0] += f"@{self.version}"
        parts += [f"{k}={','.join(v)}" for k, v in sorted(self.variants.items())]
        return " ".join(parts)


def _strip_quotes(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def parse_spec(text: str) -> list[Node]:
    """Nodes of one spec string: [root, dependencies...]. Raises SpecSyntaxError."""
    if not isinstance(text, str):
        raise SpecSyntaxError(f"a spec must be a string, not {type(text).__name__}")
    nodes = [Node()]
    current = nodes[0]
    for match in _TOKEN_RE.finditer(text):
        kind = next(k for k in ("edgeprops", "edge", "version", "propbool", "bool", "kv", "hash",
                                "name", "ws", "bad") if match.group(k) is not None)
        token = match.group(kind)
        if kind == "ws":
            continue
        if kind == "bad":
            raise SpecSyntaxError(f"unexpected {excerpt(token)} at column {match.start() + 1} of {excerpt(text)}")
        if kind in ("edgeprops", "edge"):
            if current.edge and current.name is None:
                raise SpecSyntaxError(f"'{current.edge}' without a package name in {excerpt(text)}")
            prefix = "p" if kind == "edgeprops" else "e"
            edge = "%%" if token.startswith("%%") else token[0]
            current = Node(edge=edge)
            if kind == "edgeprops":
                for prop in match.group("props").split():
                    key, _, value = prop.partition("=")
                    if key == "virtuals":
                        current.virtuals += tuple(v for v in value.split(",") if v)
                    elif key not in ("deptypes", "when"):
                        raise SpecSyntaxError(f"unknown edge property {excerpt(key)} in {excerpt(text)}")
            if match.group(f"{prefix}virtuals"):
                current.virtuals += tuple(match.group(f"{prefix}virtuals").split(","))
                current.name = match.group(f"{prefix}target")
            nodes.append(current)
        elif kind == "name":
            if current.name is not None:
                raise SpecSyntaxError(
                    f"two package names ({excerpt(current.name)}, {excerpt(token)}) in one spec {excerpt(text)}: "
                    f"one spec per list entry, '^' before a dependency")
            current.name = token
        elif kind == "version":
            if current.version is not None:
                raise SpecSyntaxError(f"two versions for {current.describe()} in {excerpt(text)}")
            current.version = token[1:].strip()
        elif kind in ("bool", "propbool"):
            sign = token[0]
            name = token.lstrip("+~-").strip()
            _set_variant(current, name, ("true",) if sign == "+" else ("false",), text, boolean=True)
        elif kind == "kv":
            key, _op, raw = _KV_RE.match(token).groups()
            value = _strip_quotes(raw)
            if key in SPEC_ATTRIBUTES:
                if key in current.attributes:
                    raise SpecSyntaxError(f"{key} set twice for {current.describe()} in {excerpt(text)}")
                current.attributes[key] = value
            else:
                values = tuple(v for v in value.split(",") if v != "")
                if not values:
                    raise SpecSyntaxError(f"variant {excerpt(key)} has no value in {excerpt(text)}")
                _set_variant(current, key, values, text)
        elif kind == "hash":
            current.attributes["hash"] = token[1:]
    if current.edge and current.name is None:
        raise SpecSyntaxError(f"'{current.edge}' without a package name in {excerpt(text)}")
    return nodes


def _set_variant(node: Node, name: str, values: tuple[str, ...], text: str, boolean: bool = False) -> None:
    if name in node.variants:
        raise SpecSyntaxError(f"variant {excerpt(name)} set twice for {node.describe()} in {excerpt(text)}")
    node.variants[name] = values
    if boolean:
        node.bools.add(name)


def words(values: Iterable[Any]) -> str:
    return ", ".join(str(v) for v in values)


def check_node(node: Node, table: PackageTable, package: str | None = None) -> list[str]:
    """Problems of one node against the table; `package` names an anonymous node's package."""
    problems: list[str] = []
    name = node.name or package
    if node.name is not None and node.name != "*" and not table.known(node.name):
        problems.append(f"unknown package '{node.name}'{table.suggest(node.name)}: not a Spack package "
                        f"in {Path(table.source).name}")
        return problems
    for virtual in node.virtuals:
        if not table.known(virtual):
            problems.append(f"unknown virtual '{virtual}'{table.suggest(virtual)}")
        elif name and not table.is_virtual(name) and table.providers(virtual) and \
                not table.provides(name, virtual):
            problems.append(f"'{name}' does not provide '{virtual}' (providers: "
                            f"{words(table.providers(virtual))})")
    if not name or name == "*":
        return problems
    if table.is_virtual(name):
        if node.variants:
            problems.append(f"'{name}' is a virtual package: it has no variants "
                            f"(set them on a provider: {words(table.providers(name))})")
        return problems
    variants = table.variants(name)
    if variants is None:
        return problems
    for vname, values in node.variants.items():
        spec = variants.get(vname)
        if spec is None:
            hint = did_you_mean(vname, variants)
            listed = words(sorted(variants)) if len(variants) <= 40 else f"{len(variants)} variants"
            problems.append(f"{name} has no variant '{vname}'{hint}; its variants: {listed}")
            continue
        problems.extend(_check_values(name, vname, values, spec, vname in node.bools))
    for conflict_node, conflict_text, message in table.conflicts(name):
        if _sets_all(node, conflict_node):
            problems.append(f"{name}: '{conflict_text}' conflict: {message}")
    return problems


def _check_values(package: str, vname: str, values: tuple[str, ...], spec: dict[str, Any],
                  boolean_syntax: bool) -> list[str]:
    kind = spec.get("type", "single")
    if kind == "bool":
        if len(values) != 1 or values[0] not in TRUE_WORDS + FALSE_WORDS:
            return [f"{package} variant '{vname}' is boolean: use +{vname} or ~{vname}, "
                    f"not {vname}={','.join(values)}"]
        return []
    if boolean_syntax:
        allowed = words(spec.get("values", [])) or "any value"
        return [f"{package} variant '{vname}' is not boolean: use {vname}=<value> ({allowed})"]
    if kind == "any":
        return []
    allowed = [str(v) for v in spec.get("values", [])]
    problems = []
    if kind == "single" and len(values) > 1:
        problems.append(f"{package} variant '{vname}' takes one value, got {','.join(values)}")
    for value in values:
        if value not in allowed:
            hint = did_you_mean(value, allowed)
            problems.append(f"'{value}' is not a value of {package} variant '{vname}'{hint}; "
                            f"allowed: {words(allowed)}")
    for exclusive in spec.get("exclusive", []) or []:
        if exclusive in values and len(values) > 1:
            problems.append(f"{package} variant '{vname}': '{exclusive}' cannot be combined with "
                            f"other values ({','.join(values)})")
    return problems


def _normal(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple("true" if v in TRUE_WORDS else "false" if v in FALSE_WORDS else v for v in values)


def _sets_all(node: Node, constraints: Node) -> bool:
    """True when `node` explicitly sets every variant constraint of `constraints`."""
    if not constraints.variants:
        return False
    for vname, wanted in constraints.variants.items():
        have = node.variants.get(vname)
        if have is None or not set(_normal(wanted)) <= set(_normal(have)):
            return False
    return True


def merge_nodes(nodes: list[Node]) -> list[Node]:
    """Nodes of one spec merged by package name (`^openmpi` given twice is one node)."""
    merged: dict[str, Node] = {}
    out: list[Node] = []
    for node in nodes:
        if node.name is None:
            continue
        if node.name in merged:
            target = merged[node.name]
            for vname, values in node.variants.items():
                target.variants.setdefault(vname, values)
            target.bools |= node.bools
            target.version = target.version or node.version
        else:
            copy = Node(node.edge, node.name, node.version, node.virtuals, dict(node.variants),
                        set(node.bools), dict(node.attributes))
            merged[node.name] = copy
            out.append(copy)
    return out


def satisfies(spec: str, constraint: str) -> bool:
    """Whether an expanded spec matches a matrix `exclude` entry (names and variants only)."""
    try:
        have = merge_nodes(parse_spec(spec))
        want = parse_spec(constraint)
    except SpecSyntaxError:
        return False
    by_name = {n.name: n for n in have}
    for index, node in enumerate(want):
        target = by_name.get(node.name) if node.name else (have[0] if index == 0 and have else None)
        if target is None:
            return False
        for vname, values in node.variants.items():
            if vname not in target.variants or not set(_normal(values)) <= set(_normal(target.variants[vname])):
                return False
        if node.version and node.version != target.version:
            return False
    return True
