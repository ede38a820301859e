"""Argument parsing shared by the command lines (scalebench, tune, slurm-cluster)."""
from __future__ import annotations

import argparse
import json
from typing import Any, Callable

from scalebench.validation import excerpt, printable

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED", "EXIT_INTERNAL", "EXIT_OK", "OneLineParser", "add_geometry_arguments",
           "path_arg", "positive_int_arg", "print_json", "printable"]

# Exit codes of every command (docs/reference.md, "Exit codes"); argparse's usage errors exit 2 as well.
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line, like every other scalebench error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse quotes the offending argument whole: cut, so that the message stays one readable line
        message = message if len(message) <= 500 else message[:497] + "..."
        self.exit(2, f"{self.prog}: error: {printable(message)}\n")


def print_json(data: Any) -> None:
    """Strict JSON on stdout, indented as json.dumps(indent=2) would: a NaN or infinity (which JSON has no
    word for) is a bug, not output. json indents in pure Python (4 s for the 686 000 rows of a 100 MB HPL
    output); orjson indents 20x faster but writes NaN as null, so json's C encoder checks first. What
    orjson writes otherwise (text beyond ASCII, integers beyond 64 bits, keys that are no text) is json's."""
    json.dumps(data, allow_nan=False)  # ValueError for NaN and infinity, TypeError for what is not JSON
    try:
        from orjson import OPT_INDENT_2, dumps
        text = dumps(data, option=OPT_INDENT_2)
    except (ImportError, TypeError):
        text = b""
    print(text.decode("ascii") if text.isascii() and text else json.dumps(data, indent=2))


def path_arg(text: str) -> str:
    """argparse type for file and directory names: an empty one is a mistake (Path('') is the current
    directory, which nobody means by it)."""
    if not text:
        raise argparse.ArgumentTypeError("no file or directory name given (an empty argument)")
    return text


def positive_int_arg(text: str) -> int:
    """argparse type for counts: a positive integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {excerpt(text)}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def float_arg(low: float, high: float, meaning: str, low_included: bool = False) -> Callable[[str], float]:
    """argparse type for a number with low < value < high (low <= value with low_included); `meaning`
    says what it is."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {excerpt(text)}") from None
        if not (low <= value if low_included else low < value) or not value < high:
            raise argparse.ArgumentTypeError(f"must be {meaning}, got {excerpt(text)}")
        return value
    return parse


def add_geometry_arguments(parser: argparse.ArgumentParser) -> None:
    """--nodes, --ranks-per-node, --threads-per-rank, --memory-per-node (HPL deck geometry)."""
    parser.add_argument("--nodes", type=positive_int_arg, required=True)
    parser.add_argument("--ranks-per-node", type=positive_int_arg, required=True)
    parser.add_argument("--threads-per-rank", type=positive_int_arg, default=1)
    parser.add_argument("--memory-per-node", required=True, help="e.g. 16GiB, 256G, 512GB")
