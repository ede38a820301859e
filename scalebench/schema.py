"""One schema mechanism for the files people write: JSON Schema (draft 2020-12), kept as data in
scalebench/data/schemas/, checked by jsonschema, each failure one line that names the file, the key
path and the fix: `site.yaml: partitions[cpu].memory_per_node: 768 has no unit; write it with one,
e.g. 768GiB`.

Types are strict: an integer is an int (not 64.0, not true), a number is finite, true/false is a
bool. A schema may carry `x-fix` (what to write instead) beside a keyword; unknown keys get the
closest allowed one as a suggestion. Values with a syntax of their own (sizes, durations, names,
shell words, regular expressions) are `format`s checked by the same functions the code uses.
Rules between fields (a time limit within the longest job) stay in code and use `fail()`.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Iterable, Mapping, Sequence

import jsonschema
import referencing
from jsonschema.exceptions import ValidationError

from scalebench import benchmark, loaders, paths
from scalebench.errors import InputError
from scalebench.units import parse_duration, parse_size, parse_slurm_size
from scalebench.validation import check_name, check_shell_word, did_you_mean, excerpt, is_name, is_number

SCHEMAS = paths.PACKAGE_DATA / "schemas"

_FORMATS = jsonschema.FormatChecker(formats=())


def _format(name: str):
    return _FORMATS.checks(name, raises=InputError)


@_format("size")
def _size(value: object) -> bool:
    return not isinstance(value, str) or parse_size(value, "") > 0


@_format("slurm-size")
def _slurm_size(value: object) -> bool:
    return not isinstance(value, str) or parse_slurm_size(value, "") > 0


@_format("duration")
def _duration(value: object) -> bool:
    return not isinstance(value, str) or parse_duration(value, "") > 0


@_format("name")
def _name(value: object) -> bool:
    return not isinstance(value, str) or bool(check_name("", value))


@_format("shell-word")
def _shell_word(value: object) -> bool:
    if isinstance(value, str):
        check_shell_word("", value)
    return True


@_format("shell-word-no-variables")
def _plain_word(value: object) -> bool:
    if isinstance(value, str):
        check_shell_word("", value, variables=False)
    return True


@_format("one-line")
def _one_line(value: object) -> bool:
    if isinstance(value, str) and re.search(r"[\x00-\x1f\x7f]", value):
        raise InputError(f"{excerpt(value)} has a line break or control character")
    return True


@_format("regex")
def _regex(value: object) -> bool:
    if isinstance(value, str):
        try:
            re.compile(value)
        except re.error as err:
            raise InputError(f"{excerpt(value)} is not a regular expression ({err})") from None
    return True


def _is_integer(checker: Any, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(checker: Any, value: Any) -> bool:
    return is_number(value)


_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_number})
_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=_TYPES)


@functools.lru_cache(maxsize=None)
def _registry() -> referencing.Registry:
    """Every schema under its file name, so that `$ref: common.yaml#/$defs/size` resolves; the site
    schema with the keys the benchmarks add to partitions and stacks (scalebench.benchmark)."""
    contents = {path.name: loaders.load_yaml(path, "schema") for path in sorted(SCHEMAS.glob("*.yaml"))}
    site = contents["site.yaml"]["$defs"]
    for place in benchmark.SITE_PLACES:
        site[place]["properties"].update(benchmark.site_keys(place))
    for definition in contents["facts.yaml"]["$defs"].values():  # a site file's keys less ReFrame's own
        if "x-site" in definition:
            held = set(definition["x-reframe-holds"])
            place = definition["x-site"]
            definition["properties"] = {**{key: {"$ref": f"site.yaml#/$defs/{place}/properties/{key}"}
                                           for key in site[place]["properties"] if key not in held},
                                        **definition["properties"]}
    return referencing.Registry().with_resources(
        (name, referencing.Resource.from_contents(schema, default_specification=referencing.jsonschema.DRAFT202012))
        for name, schema in contents.items())


@functools.lru_cache(maxsize=None)
def _validator(name: str) -> Any:
    schema = _registry().contents(name)
    return _Validator(schema, registry=_registry(), format_checker=_FORMATS)


_TYPE_WORDS = {"integer": "an integer", "number": "a finite number", "string": "a string", "boolean": "true or false",
               "array": "a list", "object": "a mapping", "null": "null"}


def key_path(instance: Any, path: Sequence[Any]) -> str:
    """partitions[cpu].gpus.count: list items by their `name` where they have one."""
    text, node = "", instance
    for part in path:
        if isinstance(part, int):
            item = node[part] if isinstance(node, list) and part < len(node) else None
            label = item.get("name") if isinstance(item, dict) else None
            text += f"[{label}]" if is_name(label) else f"[{part}]"  # a name that is no name: its index
        else:
            text += f".{part}" if text else str(part)
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            node = None
    return text


def _message(error: ValidationError) -> str:
    kind, value, schema = error.validator, error.instance, error.schema
    if kind == "additionalProperties" and isinstance(value, dict):
        allowed = sorted(schema.get("properties", {}))
        unknown = sorted(str(key) for key in value if key not in allowed)
        key = unknown[0] if unknown else "?"
        if key in schema.get("x-reframe-holds", ()):
            return f"{excerpt(key)} is the ReFrame configuration's: scalebench reads it there, as it is"
        return f"unknown key {excerpt(key)}{did_you_mean(key, allowed)}; allowed: {', '.join(allowed)}"
    if kind == "required":
        present = value if isinstance(value, dict) else {}
        return f"missing {next((k for k in error.validator_value if k not in present), '?')!r}"
    if kind in ("type", "anyOf", "oneOf"):
        wanted = error.validator_value if kind == "type" else []
        what = schema.get("x-what") or " or ".join(_TYPE_WORDS.get(t, t) for t in
                                                   (wanted if isinstance(wanted, list) else [wanted]))
        return f"must be {what or 'one of the forms documented'}, got {excerpt(value)}"
    if kind == "enum":
        choices = [str(c) for c in error.validator_value]
        return f"{excerpt(value)} is not one of {', '.join(choices)}{did_you_mean(str(value), choices)}"
    if kind == "const":
        return f"must be {excerpt(error.validator_value)}, got {excerpt(value)}"
    if kind == "format":
        return str(error.cause).removeprefix(": ") if error.cause else f"{excerpt(value)} is no {error.validator_value}"
    if kind in _BOUNDS:
        limit = error.validator_value
        bound = f"{_BOUNDS[kind]} {limit if isinstance(limit, int) else format(limit, 'g')}"
        return f"must be {schema['x-what']} ({bound}), got {excerpt(value)}" if "x-what" in schema \
            else f"must be {bound}, got {excerpt(value)}"
    if kind == "minItems":
        return f"must list at least {error.validator_value} item(s)"
    if kind == "maxItems":
        return f"must list at most {error.validator_value} item(s), got {len(value)}"
    if kind == "uniqueItems":
        repeated = next(v for i, v in enumerate(value) if v in value[:i])
        return f"lists {excerpt(repeated)} twice"
    if kind == "pattern":
        return f"{excerpt(value)} is not {schema.get('x-what') or 'of the form ' + error.validator_value}"
    if kind == "not":
        return "not allowed here"
    if kind == "dependentRequired":
        given = next(iter(k for k in error.validator_value if k in value and any(
            d not in value for d in error.validator_value[k])), "?")
        missing = [d for d in error.validator_value.get(given, ()) if d not in value]
        return f"{given} goes with {', '.join(missing)}: give both"
    return error.message


_BOUNDS = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
# Errors that say a value took the wrong branch of an anyOf, not that it is wrong within one.
_WRONG_BRANCH = ("type", "const", "enum")


def _best(errors: Iterable[ValidationError]) -> ValidationError | None:
    """The error to fix first: jsonschema's best match, and within anyOf/oneOf the error of a branch
    the value's type fits (a size with a bad unit), else the choice itself (must be 'detect' or a size)."""
    error = jsonschema.exceptions.best_match(errors)
    while error is not None and error.context:
        within = [e for e in error.context if e.validator not in _WRONG_BRANCH]
        if not within:
            break
        error = jsonschema.exceptions.best_match(within)
    return error


def check(data: Any, name: str, source: str) -> None:
    """InputError, one line naming `source`, the key path and the fix, unless `data` follows the schema
    scalebench/data/schemas/<name>."""
    error = _best(_validator(name).iter_errors(data))
    if error is None:
        return
    message = _message(error)
    fix = error.schema.get("x-fix")
    if fix and error.validator != "additionalProperties":
        message = f"{message}; {fix}"
    fail(source, key_path(data, error.absolute_path), message)


def fail(source: str, where: str, message: str) -> None:
    """The one shape of a configuration error: 'file: key.path: what is wrong; the fix'."""
    raise InputError(f"{source}: {where}: {message}" if where else f"{source}: {message}")


def site_key_note(place: str, key: str, note: str) -> str | None:
    """An annotation (x-find, x-what) of a site file's key of a partition or stack (`gpus.memory` for a
    key within one), as site.yaml writes it beside the key."""
    def resolve(node: Mapping[str, Any]) -> Mapping[str, Any]:
        while "$ref" in node:
            ref = node["$ref"]
            node = _registry().resolver().lookup(f"site.yaml{ref}" if ref.startswith("#") else ref).contents
        return node

    node: Mapping[str, Any] = _registry().contents("site.yaml")["$defs"][place]
    for part in key.split("."):
        node = resolve(node)
        node = next((resolve(b) for b in node.get("allOf", ()) if "properties" in resolve(b)), node)
        node = node.get("properties", {}).get(part, {})
    return node.get(note)
