"""The signals that end a command, handled in one place: Ctrl-C (SIGINT), SIGTERM and SIGHUP raise
Interrupted in the main thread, once (never inside an import: an extension module initialising may
not survive it; the interruption waits for the import's end). The signals that follow are counted but
interrupt nothing, so
that the cleanup the first one started (temporaries removed, children stopped) runs to its end; a
caller that waits on a child reads `received()` to hurry it. `deferred()` holds an interruption back
over steps that must not be cut in two (a report's files published together).

The command line installs the handlers (`handled()`, armed in its try: `armed()`); a library caller keeps
its own.
"""
from __future__ import annotations

import contextlib
import signal
import sys
import threading
from typing import Any, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """A signal asked the command to stop; `detail` says what was done about it (for its one line)."""

    def __init__(self, signum: int, detail: str = "") -> None:
        super().__init__(signum)
        self.signum, self.detail = signum, detail

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # the shell's convention: 130 for Ctrl-C, 143 for SIGTERM


_received: list[int] = []  # signals since handled() began
_raised = False  # Interrupted was raised for the first one
_depth = 0  # deferred() blocks entered


_RETRY_S = 0.01  # how soon an interruption held back by an import is tried again


def _handler(signum: int, frame: Any) -> None:
    _received.append(signum)
    _raise(frame)


def _retry(signum: int, frame: Any) -> None:
    _raise(frame)


def _raise(frame: Any) -> None:
    """Raise Interrupted for the first signal, unless held back (deferred(), or an import: an exception
    raised while an extension module initialises can crash it, as orjson's does with SIGSEGV; tried
    again from SIGALRM until the import is done)."""
    global _raised
    if _raised or _depth or not _received:
        return
    if _importing(frame):
        signal.setitimer(signal.ITIMER_REAL, _RETRY_S)
        return
    _raised = True
    raise Interrupted(_received[0])


def _importing(frame: Any) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def received() -> tuple[int, ...]:
    return tuple(_received)


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP handled here within the block (the main thread only: signal handlers can
    be set nowhere else), the previous handlers afterwards. An interruption is held back until `armed()`
    (inside the caller's try): the setting up and the end of the block are never cut."""
    global _raised, _depth
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    _raised, _depth = False, 1
    previous = {sig: signal.signal(sig, _handler) for sig in SIGNALS}
    previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, _retry)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _depth = 0


@contextlib.contextmanager
def armed() -> Iterator[None]:
    """Within handled(): interruptions raise in this block (one held back until now first)."""
    global _depth
    _depth -= 1
    try:
        _raise(sys._getframe())
        yield
    finally:
        _depth += 1


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """An interruption during the block is raised at its end (in place of an error that ends it)."""
    global _depth, _raised
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        _raise(sys._getframe())
