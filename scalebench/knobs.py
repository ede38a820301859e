"""The knobs of a plan: fields of a settings dataclass that a user sets by name (-S name=value), in
ReFrame's checks and in `scalebench plan` alike. Each is declared once, as a field made with knob(): its
name, type and default are the field's, so the checks' variables (reframe_tests/base.py
knob_variables) and plan's -S names (scalebench.cli.cases) are read from the dataclass."""
from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scalebench.errors import InputError
from scalebench.validation import excerpt

_KNOB = "scalebench.knob"
KINDS = (bool, int, float, str, Path)  # what a -S value is read as


@dataclass(frozen=True)
class Knob:
    name: str
    kind: type  # one of KINDS
    optional: bool  # None allowed: the partition's or the rules' value
    default: Any
    recorded: bool  # kept with every result (ReFrame's run report carries it)

    def parse(self, text: str) -> Any:
        """The value of -S name=text; InputError naming the knob."""
        if self.kind is bool:
            if text.lower() not in ("true", "false"):
                raise InputError(f"-S {self.name}={excerpt(text)}: must be true or false")
            return text.lower() == "true"
        try:
            return self.kind(text)
        except ValueError:
            raise InputError(f"-S {self.name}={excerpt(text)}: not a {self.kind.__name__}") from None


def knob(default: Any, *, recorded: bool = False) -> Any:
    """A settings field a user may set by name; recorded: kept with every result."""
    return dataclasses.field(default=default, metadata={_KNOB: recorded})


def knobs(settings: type) -> tuple[Knob, ...]:
    """The knobs of a settings dataclass, in field order."""
    hints = typing.get_type_hints(settings)
    found = []
    for f in dataclasses.fields(settings):
        if _KNOB not in f.metadata:
            continue
        hint = hints[f.name]
        kinds = [k for k in typing.get_args(hint) if k is not type(None)] \
            if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union else [hint]
        if len(kinds) != 1 or kinds[0] not in KINDS:
            raise TypeError(f"{settings.__name__}.{f.name}: a knob is one of {', '.join(k.__name__ for k in KINDS)}"
                            f" or None, not {hint}")
        found.append(Knob(f.name, kinds[0], len(kinds) != len(typing.get_args(hint) or [hint]), f.default,
                          f.metadata[_KNOB]))
    return tuple(found)
