"""Load a page in headless Chromium and report what a reader would meet: console errors, uncaught
exceptions, failed resource loads, images that did not decode, and a screenshot.

Talks the DevTools protocol over --remote-debugging-pipe (file descriptors 3 and 4, JSON messages ending
in NUL): stdlib only, no port, no websocket. Every console message and log entry arrives as an event,
which is sturdier than scraping `--enable-logging=stderr` output, whose format changes between releases.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe", "--window-size=1280,1600", "--hide-scrollbars")
IMAGES_JS = "JSON.stringify(Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight]))"


@dataclass
class PageLoad:
    errors: list[str] = field(default_factory=list)  # console errors, exceptions, failed loads
    images: list[tuple[bool, int, int]] = field(default_factory=list)  # (complete, width, height)
    headings: list[str] = field(default_factory=list)  # h2 texts
    screenshot: bytes = b""


class _Pipe:
    def __init__(self, command: list[str], timeout: float) -> None:
        to_child, self._write = os.pipe()
        self._read, from_child = os.pipe()
        # The child must see its ends as fds 3 (commands) and 4 (responses). Moved above 9 first, so
        # that placing one cannot overwrite the other.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child, from_child)]
        for fd in (to_child, from_child):
            os.close(fd)

        def place() -> None:
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.process = subprocess.Popen(command, pass_fds=(3, 4), preexec_fn=place,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for fd in high:
            os.close(fd)
        self._deadline = time.monotonic() + timeout
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def _message(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = self._deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium exited: {self.process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._message()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> None:
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._message())

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._write)
        os.close(self._read)


def _errors(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            out.append(f"exception: {params['exceptionDetails'].get('text')} "
                       f"{params['exceptionDetails'].get('exception', {}).get('description', '')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            out.append(f"console.{params['type']}: {[a.get('value') for a in params.get('args', [])]}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            out.append(f"log ({params['entry'].get('source')}): {params['entry'].get('text')} "
                       f"{params['entry'].get('url', '')}")
    return out


def load(page: Path, binary: str = "chromium", timeout: float = 25.0) -> PageLoad:
    """Open `page` (a file) in a fresh headless Chromium profile and report on it."""
    profile = tempfile.mkdtemp(prefix="scalebench-chromium-")
    pipe = _Pipe([binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"], timeout)
    try:
        target = pipe.call("Target.createTarget", url="about:blank")["targetId"]
        session = pipe.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            pipe.call(f"{domain}.enable", session)
        pipe.call("Page.navigate", session, url=page.resolve().as_uri())
        pipe.wait_for("Page.loadEventFired")
        images = pipe.call("Runtime.evaluate", session, expression=IMAGES_JS, returnByValue=True)
        headings = pipe.call("Runtime.evaluate", session, returnByValue=True,
                             expression="JSON.stringify(Array.from(document.querySelectorAll('h2'), h => h.textContent))")
        shot = pipe.call("Page.captureScreenshot", session, format="png")
        return PageLoad(errors=_errors(pipe.events), images=[tuple(i) for i in json.loads(images["result"]["value"])],
                        headings=json.loads(headings["result"]["value"]), screenshot=base64.b64decode(shot["data"]))
    finally:
        pipe.close()
        shutil.rmtree(profile, ignore_errors=True)
