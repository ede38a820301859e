"""Value and line helpers shared by the output parsers.

A value a benchmark printed is kept as a finite float, or as the token itself when it is not
a finite number ("-nan", "inf", "1.#QNAN"): JSON has no NaN, and the text is the evidence.
Before a parser uses a measurement it asks ``refusal`` whether the value can be one at all
(finite, not negative, within its quantity's bound in scalebench/data/quantities.yaml): the one
physical-sense check of every parser and of the ingest.
The expressions here are anchored by their users (``fullmatch`` or inside an anchored
expression), so matching stays linear in the size of the text.
"""

from __future__ import annotations

import math
import re
from typing import Iterable, Iterator

from scalebench.registry import quantity_of

# A value as printed: a finite float, or the token when it is not a finite number.
Value = float | str
# A value typed further: int for integer tokens, else as Value.
TypedValue = int | float | str

# A finite decimal number as C's printf writes it, unbounded (HPL's fields).
FINITE = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
# The same with bounded repetition, to embed in larger expressions.
NUM = r"[+-]?(?:\d{1,30}(?:\.\d{0,30})?|\.\d{1,30})(?:[eE][+-]?\d{1,4})?"
# What C libraries print for NaN and infinity, in any case.
NONFINITE = r"[+-]?(?i:nan|inf(?:inity)?)"
# A number or a non-finite token: one cell of a result table.
VALUE = rf"(?:{NUM}|{NONFINITE})"

VALUE_RE = re.compile(VALUE)
NONFINITE_RE = re.compile(NONFINITE)
_FLOAT_RE = re.compile(FINITE)
_UINT_RE = re.compile(r"\d{1,18}")
_INT_RE = re.compile(r"[+-]?\d{1,18}")


AGREEMENT = 0.02  # figures a program derives from one another agree within this, beyond their printed decimals


def agrees(value: float, expected: float, slack: float) -> bool:
    """A derived figure agrees with the one computed from its sources, within AGREEMENT and `slack` (the
    rounding of the decimals printed)."""
    return abs(value - expected) <= AGREEMENT * abs(expected) + slack


def to_value(token: str) -> Value:
    """A finite float for a numeric token; the token itself otherwise (non-finite or junk)."""
    if _FLOAT_RE.fullmatch(token):
        number = float(token)
        if math.isfinite(number):
            return number
    return token


def is_finite(value: object) -> bool:
    return isinstance(value, float) and math.isfinite(value)


def finite_values(values: Iterable[object]) -> list[float]:
    """The finite floats among ``values``, in order."""
    return [v for v in values if isinstance(v, float) and math.isfinite(v)]


def finite_max(values: Iterable[object]) -> float | None:
    """The largest finite float among ``values``; None when there is none."""
    finite = finite_values(values)
    return max(finite) if finite else None


def finite_min(values: Iterable[object]) -> float | None:
    """The smallest finite float among ``values``; None when there is none."""
    finite = finite_values(values)
    return min(finite) if finite else None


def refusal(value: object, unit: str, what: str, positive: bool = False) -> str | None:
    """Why `value`, printed in `unit` (a unit of scalebench/data/quantities.yaml), cannot be a
    measurement of `what`; None when it can. Not finite, negative (or 0 with `positive`: a rate or
    time that cannot print as 0), or beyond the largest value of its quantity."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return f"{what} is not finite ({value})"
    if value < 0 or (positive and value == 0):
        return f"{what} {value:g} {unit} is {'not positive' if positive else 'negative'}"
    largest = _LARGEST.get(unit)
    if largest is None:
        quantity = quantity_of(unit)
        largest = _LARGEST[unit] = quantity.largest(unit) if quantity is not None else math.inf
    if value > largest:
        return f"{what} {value:g} {unit} is beyond {largest:g} {unit}, more than any machine measures"
    return None


_LARGEST: dict = {}  # unit -> the largest measurement in it: refusal runs once per value of every output


def refused_or(value: Value, unit: str, what: str, refused: list[str], positive: bool = False) -> Value | None:
    """`value` when it can be a measurement, else None with the reason appended to `refused` (and
    "dropped": a value that cannot be is never a number in an output)."""
    reason = refusal(value, unit, what, positive)
    if reason is None:
        return value
    refused.append(f"{reason}: dropped")
    return None


def parse_int(token: str, signed: bool = False) -> int | None:
    """The int of a token of 1 to 18 digits (with an optional sign when ``signed``); else None."""
    if (_INT_RE if signed else _UINT_RE).fullmatch(token):
        return int(token)
    return None


def int_or_value(token: str, signed: bool = False) -> TypedValue:
    """int for an integer token (see parse_int), else ``to_value(token)``."""
    number = parse_int(token, signed)
    return number if number is not None else to_value(token)


def shift_decimal(token: str, power: int) -> Value:
    """``token`` times 10**power, rounded once (716.083 k -> 716083.0 exactly, not 716082.99...)."""
    mantissa, _, exponent = token.lower().partition("e")
    try:
        value = float(f"{mantissa}e{int(exponent or 0) + power}")
    except ValueError:
        return token
    return value if math.isfinite(value) else token


# What str.splitlines ends a line at.
_LINE_ENDS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


def complete_text(text: str) -> tuple[str, str | None]:
    """(`text` up to its last line end, a warning naming the last line when it had none). Every
    benchmark ends its lines with a line end: a last line without one was cut while being written
    ("23286.54" -> "2328"), and reading it as a value would be wrong. A blank tail is no line."""
    if not text or text[-1] in _LINE_ENDS:
        return text, None
    end = max(text.rfind(c) for c in _LINE_ENDS)
    tail = " ".join(text[end + 1:].split())
    if not tail:
        return text, None
    shown = tail if len(tail) <= 60 else tail[:57] + "..."
    return text[:end + 1], f"the last line, {shown!r}, has no line end (the output was cut while written): dropped"


def with_note(message: str, note: str | None) -> str:
    """A ParseError's message, with complete_text's warning when a last line was dropped."""
    return f"{message}; {note}" if note else message


# Lines are split a block at a time: a list of every line of a 256 MiB output would take gigabytes.
_BLOCK = 1 << 20


def lines_of(text: str) -> Iterator[str]:
    """The non-blank lines of ``text``, stripped: any line ending (CRLF, CR, LF) and indentation go.
    Blocks end just after a LF, where no line end of str.splitlines can be cut in two."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start + _BLOCK) + 1 or size
        yield from [line for line in map(str.strip, text[start:end].splitlines()) if line]
        start = end
