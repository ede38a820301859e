"""Charts drawn in a second process while the report's data are read and its tables written.

Importing matplotlib (about 0.6 s here) and drawing (about 0.2 s a chart) are the largest part of a big
report, and need nothing but the charts' data. A worker process started when the report starts imports
matplotlib while this process reads the results, then draws while this process writes the CSV; then
both draw what is left, the worker from the first chart on, this process from the last back.

The worker is a plain child process (not multiprocessing's: no resource tracker to outlive it) that
talks over its stdin and stdout pipes: charts in, one PNG at a time out. It lives no longer than the
report: it ends when its stdin closes (the report is done, or gone), with the report's process
(scalebench.lifetime: a SIGKILL of the report kills it too), and leaves Ctrl-C to the report, which
stops it. Its own stdout and stderr lead nowhere: nothing it prints can reach the report's output or
keep it open. Where no worker can be started, or it fails, the charts are drawn here instead: the same
pictures, later, with the reason returned.
"""
from __future__ import annotations

import collections
import contextlib
import json
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from typing import Any, BinaryIO, Sequence

from scalebench import lifetime
from scalebench.reporting.document import Chart

_TIMEOUT_S = 600  # far beyond any report: only a hung worker gets here
_ENDED = "it ended without its charts"
_HEADER = struct.Struct("!Q")  # each message: its length, then a pickle
# The worker's program: this process's module search path, then serve().
_COMMAND = ("import json, sys; sys.path[:] = json.loads(sys.argv[2]); "
            "from scalebench.reporting.chart_worker import serve; serve(int(sys.argv[1]))")


def draw_here(charts: Sequence[Chart], everything: Sequence[Chart] | None = None) -> dict[Chart, bytes]:
    """The charts drawn in this process (matplotlib imported on first use), coloured as `everything`."""
    from scalebench.reporting import plots

    return plots.render_all(charts, everything)


# --- the worker's side ---------------------------------------------------------------------------------

def serve(parent: int) -> None:
    """The worker: import matplotlib, read the charts, send (index, PNG) for each in order until told
    to stop before one ("limit", k) or its input ends; ("error", text) if drawing fails."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C to the terminal's group is the report's to handle
    lifetime.die_with_parent(parent)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # whatever a library prints cannot corrupt the messages
    # matplotlib imported while the charts are read: the report never waits to hand them over
    warm = threading.Thread(target=_warm, daemon=True)
    warm.start()
    inbox = _Inbox(0)
    charts = inbox.wait(None)
    warm.join()
    if not isinstance(charts, list):
        return
    limit = len(charts)
    for i, chart in enumerate(charts):
        for message in inbox.waiting():
            limit = min(limit, message[1]) if isinstance(message, tuple) and message[0] == "limit" else limit
        if inbox.closed or i >= limit:
            return
        try:
            png = draw_here([chart], charts)[chart]
        except Exception as err:  # noqa: BLE001 - said to the report, which draws the chart itself
            _send(out, ("error", f"{type(err).__name__}: {err}"))
            return
        _send(out, (i, png))


def _warm() -> None:
    from scalebench.reporting import plots

    del plots  # imported for its side effect: matplotlib loaded


def _send(out: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(_HEADER.pack(len(data)) + data)
    out.flush()


class _Inbox:
    """Messages from a pipe, read as they come (select: never blocking past a timeout)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer, self.closed = fd, b"", False
        self.messages: collections.deque[Any] = collections.deque()

    def _read(self, timeout: float | None) -> None:
        if not self.closed and select.select([self.fd], [], [], timeout)[0]:
            chunk = os.read(self.fd, 1 << 20)
            self.closed = not chunk
            self.buffer += chunk
        while len(self.buffer) >= _HEADER.size:
            end = _HEADER.size + _HEADER.unpack_from(self.buffer)[0]
            if len(self.buffer) < end:
                break
            self.messages.append(pickle.loads(self.buffer[_HEADER.size:end]))
            self.buffer = self.buffer[end:]

    def waiting(self) -> list[Any]:
        """The messages here now."""
        self._read(0)
        taken = list(self.messages)
        self.messages.clear()
        return taken

    def wait(self, timeout: float | None) -> Any:
        """The next message, or None when the pipe closes or `timeout` seconds pass first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.messages and not self.closed:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            self._read(left)
        return self.messages.popleft() if self.messages else None


# --- the report's side ---------------------------------------------------------------------------------

class ChartWorker:
    """`ChartWorker()` starts the worker; `submit(charts)` hands it the charts; `result()` gives {chart:
    PNG} and stops it: this process draws, from the last, those the worker has not begun, so that both
    cores draw once this one's own work is done. `failure` says why the charts were drawn in this
    process, if they were."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._inbox: _Inbox | None = None
        self._charts: list[Chart] = []
        self.failure = ""
        try:
            # SIGKILL when this process dies, from its first instruction on: nothing of it to save
            self._proc = lifetime.spawn([sys.executable, "-I", "-c", _COMMAND, str(os.getpid()), json.dumps(sys.path)],
                                        parent_death=signal.SIGKILL, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
            self._inbox = _Inbox(self._proc.stdout.fileno())  # type: ignore[union-attr]
        except (OSError, ValueError) as err:
            self._give_up(err)

    def _give_up(self, err: BaseException | str) -> None:
        what = err if isinstance(err, str) else f"{type(err).__name__}: {err}"
        self.failure = f"charts drawn in the report's own process: the chart worker failed ({what})"
        self.close()

    def _tell(self, message: Any) -> None:
        try:
            _send(self._proc.stdin, message)  # type: ignore[union-attr, arg-type]
        except OSError:  # the worker is gone (BrokenPipeError): its charts are drawn here
            self._give_up(_ENDED)

    def submit(self, charts: Sequence[Chart]) -> None:
        self._charts = list(charts)
        if self._proc is not None and self._charts:
            self._tell(self._charts)

    def result(self) -> dict[Chart, bytes]:
        images: dict[Chart, bytes] = {}
        charts, top = self._charts, len(self._charts) - 1
        sent = 0  # the worker sends its charts in order: it is drawing charts[sent]
        deadline = time.monotonic() + _TIMEOUT_S
        while top >= sent and self._proc is not None:
            messages = self._inbox.waiting() if top > sent else [self._next(deadline)]  # type: ignore[union-attr]
            for message in messages:
                if not (isinstance(message, tuple) and isinstance(message[0], int)):
                    self._give_up(message[1] if isinstance(message, tuple) else _ENDED)
                    break
                images.setdefault(charts[message[0]], message[1])
                sent = message[0] + 1
            if self._proc is not None and top > sent:
                self._tell(("limit", top))  # the worker stops before it: drawn here
                images.update(draw_here([charts[top]], charts))
                top -= 1
        self.close()
        missing = [c for c in charts if c not in images]
        if missing:
            images.update(draw_here(missing, charts))
        return images

    def _next(self, deadline: float) -> Any:
        message = self._inbox.wait(max(0.0, deadline - time.monotonic()))  # type: ignore[union-attr]
        if message is None and not self._inbox.closed:  # type: ignore[union-attr]
            return ("error", f"TimeoutError: no chart within {_TIMEOUT_S} s")
        return message

    def close(self) -> None:
        """Stop the worker (at once: what it has not sent is drawn here) and wait for it."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for pipe in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait()
