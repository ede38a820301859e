"""Shared machinery of the parser tests: the real vectors in tests/data/<kind>, the comparison
with their expected files, and the robustness loops (hostile lines, mutated outputs).

Imported as ``from vectors import ...``: pytest puts this directory on sys.path for the test
modules in it (they are not in a package).
"""

from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

import pytest

from scalebench.errors import ParseError
from scalebench.benchmarks import KINDS, parse_file, parse_text

DATA_ROOT = Path(__file__).resolve().parent / "data"


def printed(lines: Iterable[str]) -> str:
    """Lines as a program prints them, each ending with a line end: parsers drop a last line without
    one (it was cut while being written)."""
    return "".join(f"{line}\n" for line in lines)


def data_dir(kind: str) -> Path:
    return DATA_ROOT / kind


def vector_names(kind: str) -> List[str]:
    """The vectors of ``kind``: every <name>.expected.json, sorted by name."""
    return sorted(p.name[: -len(".expected.json")] for p in data_dir(kind).glob("*.expected.json"))


def read_vector(kind: str, name: str) -> str:
    return (data_dir(kind) / f"{name}.txt").read_text()


def sample_texts(kind: str) -> List[str]:
    """The text of every real output of ``kind`` (the .txt files that are not .source.txt)."""
    return [p.read_text() for p in sorted(data_dir(kind).glob("*.txt")) if not p.name.endswith(".source.txt")]


def assert_sources_present(kind: str, names: Iterable[str]) -> None:
    for name in names:
        assert (data_dir(kind) / f"{name}.source.txt").is_file()


def is_explanation(key: str) -> bool:
    """Keys of an expected file that explain it rather than state parser output."""
    return key == "notes" or key.startswith("derived_")


def assert_same(actual: Any, expected: Any, path: str = "$", rel_tol: float = 1e-12) -> None:
    """Exact comparison (types included) except floats, which get a relative tolerance (1e-12)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), path
        wanted = {k: v for k, v in expected.items() if not is_explanation(k)}
        assert sorted(actual) == sorted(wanted), path
        for key, value in wanted.items():
            assert_same(actual[key], value, f"{path}.{key}", rel_tol)
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), path
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{path}[{i}]", rel_tol)
    elif isinstance(expected, float):
        assert type(actual) is float and math.isclose(actual, expected, rel_tol=rel_tol), (path, actual)
    else:
        assert type(actual) is type(expected) and actual == expected, (path, actual, expected)


def load_vector(kind: str, name: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """(parser output, expected file) of one vector; the output must be strict JSON (no NaN)."""
    expected = json.loads((data_dir(kind) / f"{name}.expected.json").read_text(encoding="utf-8"))
    actual = parse_file(kind, data_dir(kind) / f"{name}.txt")
    json.dumps(actual, allow_nan=False)
    return actual, expected


def assert_extra_keys(actual: Mapping[str, Any], expected: Mapping[str, Any], declared: Iterable[str]) -> None:
    """The keys the output has beyond the expected file are exactly the declared ones it lacks."""
    wanted = {k for k in expected if not is_explanation(k)}
    assert set(actual) - wanted == set(declared) - wanted


def pop_extra(actual: Dict[str, Any], expected: Mapping[str, Any], key: str) -> Any:
    """Take a key the parser adds beyond the expected file out of the output."""
    assert key not in expected
    return actual.pop(key)


def check_extras(
    actual: Dict[str, Any], expected: Mapping[str, Any], extras: Mapping[str, Any], rel_tol: float = 1e-12
) -> None:
    """Take each declared extra key out of the output, checking its value."""
    for key, value in extras.items():
        assert_same(pop_extra(actual, expected, key), value, key, rel_tol)


def assert_registered(kind: str, parse: Callable[[str], Any], text: str) -> None:
    """``kind`` is in the registry, and parse_text gives the parser's own dict for ``text``."""
    assert kind in KINDS
    assert parse_text(kind, text) == parse(text).to_dict()


def assert_parse_errors(parse: Callable[[str], Any], texts: Iterable[str]) -> None:
    """Each text raises ParseError."""
    for text in texts:
        with pytest.raises(ParseError):
            parse(text)


def mutated_texts(
    samples: Sequence[str], seed: int, rounds: int, max_edits: int, alphabet: str, replace: bool = True
) -> Iterator[str]:
    """Random edits of the samples, each cut at a random length.

    An edit deletes a character, inserts one of ``alphabet`` or, when ``replace``, overwrites
    one with a random character below U+3000 (without it: delete or insert, evenly).
    """
    rng = random.Random(seed)
    for _ in range(rounds):
        text = list(rng.choice(samples))
        for _ in range(rng.randint(1, max_edits)):
            pos = rng.randrange(len(text))
            if replace:
                action = rng.randrange(3)
            else:
                action = 0 if rng.random() < 0.5 else 1
            if action == 0:
                del text[pos]
            elif action == 1:
                text.insert(pos, rng.choice(alphabet))
            else:
                text[pos] = chr(rng.randrange(0x20, 0x3000))
        yield "".join(text)[: rng.randrange(1, len(text) + 1)]


def assert_result_or_parse_error(
    parse: Callable[[str], Any], texts: Iterable[str], check: Optional[Callable[[Any], None]] = None
) -> None:
    """Each text parses to strict-JSON output (then passes ``check``) or raises ParseError."""
    for text in texts:
        try:
            out = parse(text)
        except ParseError:
            continue
        json.dumps(out.to_dict(), allow_nan=False)
        if check is not None:
            check(out)


def assert_linear_time(
    parse: Callable[[str], Any], texts: Iterable[str], must_fail: bool = False, seconds: float = 5.0
) -> None:
    """All texts (huge hostile lines) parse, or raise ParseError, within ``seconds`` in total.

    With ``must_fail`` each text must raise ParseError; otherwise a result must be strict JSON.
    """
    start = time.perf_counter()
    for text in texts:
        if must_fail:
            assert_parse_errors(parse, [text])
            continue
        try:
            json.dumps(parse(text).to_dict(), allow_nan=False)
        except ParseError:
            pass
    assert time.perf_counter() - start < seconds
