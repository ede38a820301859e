"""Every file scalebench writes appears whole or not at all: reports, CSVs, references, frozen decks,
index segments, provenance.

A file (or a directory of files) is written under a temporary name in the directory it goes to,
.<final name>~<host>~<pid>~<random>.tmp, and renamed into place once complete, so a reader sees it
whole or not at all (no reader looks at names that start with a dot). The temporary is removed on
every error and interruption (scalebench.interrupts turns SIGTERM and SIGHUP into an exception, so the
removal runs); a process killed outright (SIGKILL, the OOM killer) cannot, and the next writer into
that directory sweeps what it left: the temporaries of this host whose process is gone.

An OSError on the way (a full disk, no permission, a read-only file system) is an OutputError that
names the file (`named`), never a traceback.
"""
from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import re
import secrets
import shutil
import socket
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Sequence, Union

from scalebench import faultpoints, interrupts
from scalebench.errors import OutputError

Content = Union[bytes, str, Callable[[BinaryIO], None]]  # the bytes, UTF-8 text, or a writer of a handle

_OS_ERROR = re.compile(r" \(os error \d+\)$")  # how polars (Rust) words an OSError it passes on
_TEMPORARY = re.compile(r"\..+~(?P<host>[^~/]+)~(?P<pid>\d+)~[0-9a-f]+\.tmp")


@functools.lru_cache(maxsize=1)
def _host() -> str:
    return socket.gethostname().replace("~", "-").replace("/", "-")[:64] or "host"


def temporary(final: Path) -> Path:
    """A new temporary name beside `final`, naming this host and process (the final name cut, so that a
    long one still leaves room for the rest within a file name's 255 bytes)."""
    return final.with_name(f".{final.name[:100]}~{_host()}~{os.getpid()}~{secrets.token_hex(4)}.tmp")


def _gone(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # EPERM: alive, another user's
        return False
    return False


def stale(name: str) -> bool:
    """Whether `name` is a temporary of a process of this host that is gone (another host's may be
    alive: a results directory shared over NFS is never swept of them)."""
    match = _TEMPORARY.fullmatch(name)
    return bool(match) and match["host"] == _host() and _gone(int(match["pid"]))


def sweep(directory: Path) -> bool:
    """Remove the temporaries dead processes of this host left in `directory` (best effort: whatever
    cannot be removed stays, hidden, for the next writer); whether there were any."""
    try:
        names = [name for name in os.listdir(directory) if name.endswith(".tmp") and stale(name)]
    except OSError:
        return False
    for name in names:
        remove(directory / name)
    return bool(names)


def sweep_below(root: Path) -> None:
    """`sweep` each directory in `root` (reports/: each report's own), and remove one that held nothing
    but a dead process's temporaries (a report killed before it published anything made it)."""
    try:
        entries = [entry for entry in os.scandir(root) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for entry in entries:
        if sweep(Path(entry.path)):
            with contextlib.suppress(OSError):
                os.rmdir(entry.path)  # only when empty now


def remove(path: Path) -> None:
    """A temporary of this process removed, file or directory, if it is there."""
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink()


@contextlib.contextmanager
def named(final: Path, what: str = "") -> Iterator[None]:
    """An OSError inside (FileExistsError aside: a name taken is the caller's to decide) as an
    OutputError naming `final` and `what` chose it (an option, a setting)."""
    try:
        yield
    except FileExistsError:
        raise
    except OSError as err:
        why = err.strerror or _OS_ERROR.sub("", str(err)) or type(err).__name__
        raise OutputError(f"{what + ': ' if what else ''}cannot write {final}: {why}") from None


@contextlib.contextmanager
def staged(final: Path, *, directory: bool = False) -> Iterator[Path]:
    """A temporary name for `final` (created as an empty directory with `directory`), removed when the
    block ends by an error or an interruption, or unpublished; the directory is swept first."""
    sweep(final.parent)
    tmp = temporary(final)
    if directory:
        tmp.mkdir()
    try:
        yield tmp
    finally:
        remove(tmp)  # published: gone already


def fill(tmp: Path, content: Content) -> None:
    """Create the file `tmp` with `content`, on disk before it is published (fsync)."""
    with open(tmp, "xb") as handle:
        if callable(content):
            content(handle)
        else:
            handle.write(content.encode("utf-8") if isinstance(content, str) else content)
        handle.flush()
        os.fsync(handle.fileno())


def publish(tmp: Path, final: Path, *, replace: bool = False) -> None:
    """Give the complete `tmp` its name `final`: in place of an existing file with `replace`, else never
    over anything (FileExistsError, even when another process takes the name meanwhile)."""
    faultpoints.reached(f"publish:{final.name}")
    if replace:
        os.replace(tmp, final)
        return
    try:
        _rename_noreplace(tmp, final)
        return
    except _Unsupported:
        pass
    if tmp.is_dir():
        if os.path.lexists(final):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(final))
        os.rename(tmp, final)  # no exclusive rename of a directory here: a race with another writer is lost
        return
    try:
        os.link(tmp, final)  # exclusive: FileExistsError when taken
    except FileExistsError:
        raise
    except OSError:  # no hard links on this file system
        if os.path.lexists(final):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(final)) from None
        os.rename(tmp, final)
        return
    os.unlink(tmp)


class _Unsupported(Exception):
    pass


_RENAME_NOREPLACE, _AT_FDCWD = 1, -100


@functools.lru_cache(maxsize=1)
def _renameat2() -> Callable[..., int] | None:
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # not Linux, or a C library before glibc 2.28
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return function


def _rename_noreplace(src: Path, dst: Path) -> None:
    """Linux's renameat2(RENAME_NOREPLACE): one step, never over an existing name; _Unsupported where the
    system or the file system (NFS) has none."""
    function = _renameat2()
    if function is None:
        raise _Unsupported
    if function(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), _RENAME_NOREPLACE) == 0:
        return
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        raise _Unsupported
    raise OSError(code, os.strerror(code), str(dst)) if code != errno.EEXIST else \
        FileExistsError(code, os.strerror(code), str(dst))


def write(final: Path, content: Content, *, replace: bool = False, what: str = "") -> Path:
    """Write `final` whole or not at all (see the module); FileExistsError when it exists and not
    `replace`; OutputError naming it when it cannot be written."""
    with named(final, what), staged(final) as tmp:
        fill(tmp, content)
        faultpoints.reached(f"written:{final.name}")
        publish(tmp, final, replace=replace)
    return final


def publish_together(pairs: Sequence[tuple[Path, Path]]) -> None:
    """Publish each (temporary, final) in order, never over an existing name; all or none: when a name is
    taken (FileExistsError), an error or an interruption stops it, those published are given back their
    temporary names (an interruption waits for the step it comes in: scalebench.interrupts.deferred)."""
    done: list[tuple[Path, Path]] = []
    try:
        for tmp, final in pairs:
            with interrupts.deferred():  # a name given and its record are one step
                publish(tmp, final)
                done.append((tmp, final))
    except BaseException:
        with interrupts.deferred():
            for tmp, final in reversed(done):
                with contextlib.suppress(OSError):
                    os.rename(final, tmp)
        raise


def make_directory(path: Path) -> list[Path]:
    """Make `path` and its parents; those made here, for `unmake` to remove if nothing goes into them."""
    made = [p for p in [*reversed(path.parents), path] if not os.path.lexists(p)]
    path.mkdir(parents=True, exist_ok=True)
    return made


def unmake(made: Sequence[Path]) -> None:
    """The directories make_directory made, removed where still empty: a failed command leaves none."""
    for directory in reversed(made):
        with contextlib.suppress(OSError):
            directory.rmdir()


class Staging:
    """Temporaries of files (and directories of files) that go into one directory, made one by one and
    published together (publish_together); on leaving the block every one not published is removed,
    whatever ends it. Entering sweeps the directory (`sweep`)."""

    def __init__(self, directory: Path, what: str = "") -> None:
        self.directory, self.what = directory, what  # `what` chose the directory: errors name it (`named`)
        self._made: list[Path] = []

    def __enter__(self) -> "Staging":
        sweep(self.directory)
        return self

    def __exit__(self, *exc: object) -> None:
        for tmp in self._made:
            remove(tmp)

    def file(self, name: str, content: Content) -> Path:
        """The temporary of the file `name`, filled with `content`."""
        tmp = temporary(self.directory / name)
        self._made.append(tmp)
        with named(self.directory / name, self.what):
            fill(tmp, content)
        faultpoints.reached(f"written:{name}")
        return tmp

    def directory_for(self, name: str) -> Path:
        """The temporary of the directory `name`, empty, for the caller to fill."""
        tmp = temporary(self.directory / name)
        self._made.append(tmp)
        with named(self.directory / name, self.what):
            tmp.mkdir()
        return tmp
