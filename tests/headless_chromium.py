"""Load a page in headless Chromium and report what a reader would meet: console errors, uncaught
exceptions, failed resource loads, images that did not decode, and a screenshot; measure the page at a
given width and media (opened), and print it to PDF as a reader's browser would (print_to_pdf).

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
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

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


class Page:
    """An open page: evaluate script in it, at a width and in a media of one's choosing."""

    def __init__(self, pipe: _Pipe, session: str) -> None:
        self._pipe, self._session = pipe, session

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        return self._pipe.call(method, self._session, **params)

    def evaluate(self, expression: str) -> Any:
        """The value of a script expression (returned by value: JSON-like)."""
        found = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in found:
            raise RuntimeError(f"{expression[:80]}: {found['exceptionDetails']}")
        return found["result"].get("value")

    def resize(self, width: int, height: int = 1000) -> None:
        """The viewport a window of this size gives (CSS pixels, no scroll bars); the layout follows."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=False)

    def media(self, media: str) -> None:
        """Lay the page out for 'print' or 'screen' (@media rules), as printing would."""
        self.call("Emulation.setEmulatedMedia", media=media)

    def errors(self) -> list[str]:
        return _errors(self._pipe.events)


@contextmanager
def opened(page: Path, width: int = 1280, height: int = 1600, binary: str = "chromium",
           timeout: float = 25.0) -> Iterator[Page]:
    """`page` (a file) loaded in a fresh headless Chromium profile, its viewport `width` x `height`."""
    profile = tempfile.mkdtemp(prefix="scalebench-chromium-")
    pipe = _Pipe([binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"], timeout)
    try:
        target = pipe.call("Target.createTarget", url="about:blank")["targetId"]
        session = pipe.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            pipe.call(f"{domain}.enable", session)
        opened_page = Page(pipe, session)
        opened_page.resize(width, height)
        pipe.call("Page.navigate", session, url=page.resolve().as_uri())
        pipe.wait_for("Page.loadEventFired")
        yield opened_page
    finally:
        pipe.close()
        shutil.rmtree(profile, ignore_errors=True)


def load(page: Path, binary: str = "chromium", timeout: float = 25.0) -> PageLoad:
    """Open `page` (a file) in a fresh headless Chromium profile and report on it."""
    with opened(page, binary=binary, timeout=timeout) as found:
        images = found.evaluate(IMAGES_JS)
        headings = found.evaluate("JSON.stringify(Array.from(document.querySelectorAll('h2'), h => h.textContent))")
        shot = found.call("Page.captureScreenshot", format="png")
        return PageLoad(errors=found.errors(), images=[tuple(i) for i in json.loads(images)],
                        headings=json.loads(headings), screenshot=base64.b64decode(shot["data"]))


def print_to_pdf(page: Path, pdf: Path, binary: str = "chromium", timeout: float = 120.0) -> Path:
    """`page` printed as a reader's browser prints it (--print-to-pdf: the page's own @page size and
    margins, print media), without the browser's header and footer lines."""
    profile = tempfile.mkdtemp(prefix="scalebench-chromium-")
    try:
        subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={profile}", "--no-pdf-header-footer", f"--print-to-pdf={pdf}",
                        page.resolve().as_uri()], check=True, capture_output=True, timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if not pdf.is_file() or not pdf.read_bytes().startswith(b"%PDF"):
        raise RuntimeError(f"chromium wrote no PDF at {pdf}")
    return pdf
