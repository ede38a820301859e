"""The one way scalebench reads a file it is given: a regular file, at most a stated size, as text.

A FIFO, a device or a directory is refused before it is opened for reading (a FIFO would block,
/dev/zero never ends); a file over the limit is refused by name; UTF-16 and UTF-32 text is named as
such rather than misread; other undecodable bytes become U+FFFD. Every OSError on the way (EIO from
/proc/self/mem, EACCES, ELOOP, a file vanishing) is an InputError naming the file, here and nowhere else.
"""
from __future__ import annotations

import codecs
import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from scalebench.errors import InputError
from scalebench.units import format_size
from scalebench.validation import excerpt

# Benchmark outputs, run reports and data files are far below this; a larger file is not one of them.
DEFAULT_LIMIT = 256 * 2**20

_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
              (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


@contextmanager
def _named_os_errors(name: str, what: str) -> Iterator[None]:
    """Any OSError inside as an InputError naming `what` and the file (a regular file can still fail
    to read: /proc/self/mem gives EIO, a network file system ESTALE)."""
    try:
        yield
    except OSError as err:
        raise InputError(f"{what}: cannot read {name}: {err.strerror or type(err).__name__}") from None


def _open_regular(name: str, what: str) -> tuple[Any, os.stat_result]:
    """A binary handle on the regular file `name` and its stat; InputError naming `what` otherwise."""
    if not name:
        raise InputError(f"{what}: no file name given")
    with _named_os_errors(name, what):
        # O_NONBLOCK: opening a FIFO for reading must not wait for a writer
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
                raise InputError(f"{what}: {name} is {kind}")
        except BaseException:
            os.close(fd)
            raise
        # Once the handle owns the descriptor only it closes it: closing it here too, after an interruption
        # between the two, would close whatever file is given that number next.
        return os.fdopen(fd, "rb"), info


def read_bytes(path: str | Path, what: str = "file", limit: int = DEFAULT_LIMIT) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; InputError naming `what` otherwise."""
    name = str(path)
    handle, info = _open_regular(name, what)
    with handle, _named_os_errors(name, what):
        if info.st_size > limit:
            raise InputError(f"{what}: {name} is {format_size(info.st_size)}, more than the "
                             f"{format_size(limit)} scalebench reads")
        data = handle.read(limit + 1)
    if len(data) > limit:  # grew while being read
        raise InputError(f"{what}: {name} is more than the {format_size(limit)} scalebench reads")
    return data


def decode(data: bytes, what: str = "file", strict: bool = False) -> str:
    """UTF-8 text (a BOM dropped); UTF-16/32 named; other bad bytes as U+FFFD, or with `strict` (files
    people write, whose every byte means something) an InputError naming the first one."""
    for bom, encoding in _WIDE_BOMS:
        if data.startswith(bom):
            raise InputError(f"{what}: {encoding} text; convert it to UTF-8 (e.g. iconv -f {encoding} -t UTF-8)")
    if data[:64].count(b"\x00") > 8:
        raise InputError(f"{what}: binary or UTF-16/32 data (NUL bytes), not UTF-8 text")
    try:
        text = data.decode("utf-8", errors="strict" if strict else "replace")
    except UnicodeDecodeError as err:
        raise InputError(f"{what}: not UTF-8 text (byte {err.start} is {excerpt(data[err.start:err.start + 1])}); "
                         "convert it to UTF-8 (e.g. iconv -f LATIN1 -t UTF-8)") from None
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: str | Path, what: str = "file", limit: int = DEFAULT_LIMIT, strict: bool = False) -> str:
    return decode(read_bytes(path, what, limit), f"{what} {path}", strict)


def read_tail(path: str | Path, what: str = "file", size: int = 64 * 1024) -> str:
    """The last `size` bytes of a regular file as text (undecodable bytes as U+FFFD), whatever its size."""
    handle, info = _open_regular(str(path), what)
    with handle, _named_os_errors(str(path), what):
        handle.seek(max(0, info.st_size - size))
        return handle.read(size).decode("utf-8", errors="replace")


def file_key(path: str | Path, what: str = "file") -> tuple[str, int, int]:
    """Identity of a file's current content (path, mtime, size): a cache key that changes with the file."""
    with _named_os_errors(str(path), what):
        stat_result = os.stat(path)
        return str(Path(path).resolve()), stat_result.st_mtime_ns, stat_result.st_size
