"""Checks of single values, each failing with an InputError that names the field.

Numbers: what counts as a measurement or a count (a bool never does). Names and shell words:
what may go into a path or, unquoted, into a job script.
"""
from __future__ import annotations

import difflib
import math
import numbers
import re
import reprlib
import sys
from typing import Any, Iterable

from scalebench.errors import InputError

# HPL and MPI hold N, NB, P, Q and rank counts in a C int; beyond it nothing runs, and arithmetic on
# such values overflows floats or factorises for ever.
C_INT_MAX = 2**31 - 1
# The largest int a float holds without overflow: a bigger one is no measurement (float() raises).
FLOAT_INT_MAX = int(sys.float_info.max)

_EXCERPT = reprlib.Repr()
_EXCERPT.maxlevel, _EXCERPT.maxlist, _EXCERPT.maxtuple, _EXCERPT.maxdict = 3, 4, 4, 4
_EXCERPT.maxstring, _EXCERPT.maxother, _EXCERPT.maxlong = 160, 60, 40  # a path or a name shows whole


def excerpt(value: Any, limit: int = 200) -> str:
    """A short repr of `value` for an error message: bounded in length and depth, whatever the value
    (a 400-digit int, a list of a million items, a shared alias graph)."""
    text = _EXCERPT.repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def excerpt_text(text: str, limit: int = 80) -> str:
    """At most `limit` characters of `text`, on one line: what an error message may quote of an input."""
    one_line = " ".join(str(text).split())
    return one_line if len(one_line) <= limit else one_line[:limit - 3] + "..."


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest choice, '' when nothing is close or the value is a choice
    (refused for another reason, such as no data)."""
    if str(value) in set(choices):
        return ""
    close = difflib.get_close_matches(str(value)[:100], sorted(set(choices)), n=1)  # a long value: slow, never close
    return f" (did you mean {close[0]!r}?)" if close else ""


def printable(text: str) -> str:
    """Control and separator characters as escapes: a message or a table cell stays one line, whatever
    it quotes."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def is_number(value: Any) -> bool:
    """A finite int or float, not a bool (an int beyond a float's range is not finite either)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return -FLOAT_INT_MAX <= value <= FLOAT_INT_MAX if isinstance(value, int) else math.isfinite(value)


def finite_number(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{name}: must be a finite number, got {excerpt(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise InputError(f"{name}: must be a finite number, got {excerpt(value)}")
    return number


def positive_number(value: object, name: str) -> float:
    number = finite_number(value, name)
    if number <= 0:
        raise InputError(f"{name}: must be positive, got {excerpt(value)}")
    return number


def non_negative_number(value: object, name: str) -> float:
    number = finite_number(value, name)
    if number < 0:
        raise InputError(f"{name}: must not be negative, got {excerpt(value)}")
    return number


def require_positive(name: str, value: Any) -> int:
    """A positive int (not a bool, not a float)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(f"{name}: must be a positive integer, got {excerpt(value)}")
    return value


def require_count(name: str, value: Any) -> int:
    """A positive integer HPL, MPI and the applications can hold (at most C_INT_MAX)."""
    if require_positive(name, value) > C_INT_MAX:
        raise InputError(f"{name}: must be at most {C_INT_MAX} (HPL, MPI and the applications hold it in a C int)")
    return value


def positive_count(value: object, name: str) -> int:
    """A positive integral count of any integral type (numpy's included)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise InputError(f"{name}: must be a positive integer process count, got {excerpt(value)}")
    return int(value)


_NAME = re.compile(r"[A-Za-z0-9_.-]+")


# A name becomes one component of a path (a frozen deck's directory, a perflog's): far below NAME_MAX.
NAME_MAX_CHARS = 64


def is_name(value: Any) -> bool:
    """A system, partition or stack name (see check_name)."""
    return (isinstance(value, str) and len(value) <= NAME_MAX_CHARS and bool(_NAME.fullmatch(value))
            and value not in (".", ".."))


def check_name(where: str, value: Any) -> str:
    """System, partition and stack names end up in paths (perflogs, frozen decks): no separators."""
    if not is_name(value):
        raise InputError(f"{where}: {excerpt(value)} must be at most {NAME_MAX_CHARS} letters, digits, '_', '.' "
                         "and '-' (not a valid name: it becomes a path)")
    return value


# Characters that quote, separate, redirect or substitute in a shell (with line breaks and other
# control characters); `$` too where ReFrame expands it (see check_shell_word).
_SHELL_SPECIAL = re.compile(r"[\s;&|<>'\"\\`()\x00-\x1f\x7f]")
_SHELL_SPECIAL_OR_DOLLAR = re.compile(r"[\s;&|<>'\"\\`()$\x00-\x1f\x7f]")


def check_shell_word(where: str, value: Any, variables: bool = True) -> str:
    """A value that ReFrame writes unquoted into job scripts (environment values, launcher options,
    module names, program paths) and into which it substitutes $(...) and `...` itself when it loads
    an environment or a directory: one plain word, no command can hide in it. `variables`: $NAME and
    ${NAME} allowed (PATH: /opt/x/bin:$PATH)."""
    text = str(value)
    bad = (_SHELL_SPECIAL if variables else _SHELL_SPECIAL_OR_DOLLAR).search(text)
    if bad:
        raise InputError(f"{where}: {excerpt(text)} has {excerpt(bad.group(0))}; it goes unquoted into job "
                         "scripts, so it must "
                         "be one word without spaces, quotes, backslashes, ;&|<>()`" + ("" if variables else " or $"))
    return text
