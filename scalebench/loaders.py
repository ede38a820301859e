"""The one loader per format: YAML and JSON files read through scalebench.textfile, bounded in size,
nesting depth and (YAML) alias expansion, every failure an InputError naming the file.

YAML: PyYAML composes recursively (deep nesting is a RecursionError) and shares the node of an anchor
between its aliases (an alias bomb is small as a graph and explodes only when traversed or printed).
An event pre-pass, which is iterative, bounds the depth and counts the size the document has once its
aliases are expanded, with one size per anchor (memoised): linear in the text, whatever it holds.
Merge keys (`<<: *tcp`) are aliases like any other and count the same.

JSON: orjson refuses nesting beyond 1024 levels; the standard library, which reads what orjson does
not (Python writes NaN as a bare word), stops at Python's recursion limit. Both become InputError.
Numbers come back as JSON has them (a 400-digit int, NaN): callers check values, not the loader.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from scalebench import textfile
from scalebench.errors import InputError
from scalebench.validation import excerpt_text

# Configuration files (site files, thresholds, rules, Spack environments) are a few KB; a file near
# these limits is not one of them.
CONFIG_LIMIT = 16 * 2**20
YAML_MAX_DEPTH = 64
YAML_MAX_NODES = 200_000  # scalars and collections once every alias is expanded
# Run reports: ReFrame writes about 1 KB per figure, 100 MB for 100 000 figures.
REPORT_LIMIT = 1024 * 2**20

try:  # run reports are large: orjson parses them about 4x faster than the standard library
    from orjson import loads as _fast_loads
except ImportError:  # the standard library gives the same values
    _fast_loads = json.loads  # type: ignore[assignment]

class StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The one YAML loader: YAML 1.2's core schema for plain scalars, and no key twice in a mapping.

    PyYAML implements YAML 1.1, where `1e308` is a string, `1:30` the integer 90, `no` false, `017`
    octal and `2026-11-25` a date, and a repeated key silently replaces the first (`min: 95%` then
    `min: 50%` checks 50%). YAML 1.2 (what Spack's ruamel and most tools read) has none of that."""


StrictLoader.yaml_implicit_resolvers = {}
_IMPLICIT = (  # YAML 1.2.2 core schema, section 10.3.2; ints before floats, which also match "123"
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    ("tag:yaml.org,2002:float",
     r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
     "-+0123456789."),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:merge", r"^(?:<<)$", "<"),  # merge keys stay: site files share blocks with them
)
for _tag, _pattern, _first in _IMPLICIT:
    StrictLoader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))


def _construct_int(loader: StrictLoader, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node)
    base = {"0o": 8, "0x": 16}.get(text[:2], 10)
    return int(text[2:] if base != 10 else text, base)  # "017" is seventeen, not YAML 1.1's octal


def _construct_float(loader: StrictLoader, node: yaml.ScalarNode) -> float:
    text = loader.construct_scalar(node).lower()
    if text.endswith((".inf", ".nan")):
        return float(text.replace(".", ""))
    return float(text)


def _construct_unique_mapping(loader: StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=deep)
        if isinstance(key, (str, int, float, bool)) and key in seen:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping", node.start_mark, f"key {key!r} is repeated", key_node.start_mark)
        if isinstance(key, (str, int, float, bool)):
            seen.add(key)
    return loader.construct_mapping(node, deep=deep)


StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
StrictLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def _line(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    return f" line {mark.line + 1}" if mark is not None else ""


def _yaml_problem(err: yaml.YAMLError) -> str:
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    return excerpt_text(str(problem), 120)


def check_yaml_shape(text: str, source: str, max_depth: int = YAML_MAX_DEPTH,
                     max_nodes: int = YAML_MAX_NODES) -> None:
    """InputError when the YAML nests deeper than `max_depth` or expands (aliases included) to more than
    `max_nodes` nodes. Syntax errors are left to the loader, which names them."""
    sizes: dict[str, int] = {}  # anchor -> expanded size of its node
    stack: list[list[Any]] = [[None, 0]]  # [anchor, expanded size so far] per open collection
    try:
        for event in yaml.parse(text, Loader=StrictLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                stack.append([event.anchor, 1])
                if len(stack) - 1 > max_depth:
                    raise InputError(f"{source}: nested more than {max_depth} levels deep")
                continue
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                anchor, size = stack.pop()
            elif isinstance(event, yaml.ScalarEvent):
                anchor, size = event.anchor, 1
            elif isinstance(event, yaml.AliasEvent):
                anchor, size = None, sizes.get(event.anchor, 1)
            else:
                continue
            if anchor is not None:
                sizes[anchor] = size
            stack[-1][1] += size
            if stack[-1][1] > max_nodes:
                raise InputError(f"{source}: more than {max_nodes} values once its aliases (*name) are expanded")
    except yaml.YAMLError:
        return  # the loader reports it with its line


def parse_yaml(text: str, source: str, *, max_depth: int = YAML_MAX_DEPTH, max_nodes: int = YAML_MAX_NODES) -> Any:
    """The one YAML document of `text` (None when empty); InputError naming `source` otherwise."""
    check_yaml_shape(text, source, max_depth, max_nodes)
    try:
        return yaml.load(text, Loader=StrictLoader)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as err:
        raise InputError(f"{source}:{_line(err)} not valid YAML ({_yaml_problem(err)})") from None
    except RecursionError:  # the pre-pass bounds depth; a deeper stack than expected still ends here
        raise InputError(f"{source}: nested too deeply") from None


def load_yaml(path: str | Path, what: str = "file", limit: int = CONFIG_LIMIT, **bounds: Any) -> Any:
    """The YAML file at `path` (a regular file of at most `limit` bytes, strict UTF-8: a configuration's
    every byte means something), bounded as parse_yaml; errors start with the path (or, when it cannot
    be read, with `what`)."""
    return parse_yaml(textfile.read_text(path, what, limit, strict=True), str(path), **bounds)


def parse_json(data: bytes, source: str) -> Any:
    """JSON as Python's json module reads it (NaN included); InputError naming `source` otherwise."""
    try:
        return _fast_loads(data)
    except ValueError as err:
        if "depth" in str(err):  # orjson: "depth limit exceeded"
            raise InputError(f"{source}: nested more than 1024 levels deep") from None
    text = textfile.decode(data, source, strict=True)  # names UTF-16/32 and bytes that are no UTF-8
    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(f"{source}: nested too deeply") from None
    except ValueError as err:
        raise InputError(f"{source}: not valid JSON ({excerpt_text(str(err), 120)})") from None


def load_json(path: str | Path, what: str = "file", limit: int = REPORT_LIMIT) -> Any:
    return parse_json(textfile.read_bytes(path, what, limit), str(path))
