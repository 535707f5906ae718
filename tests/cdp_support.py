"""Driving headless Chromium over the DevTools protocol, standard library only.

``--dump-dom`` shows what a page holds but cannot touch it. To click a toggle
or press a key the way a person does, the tests speak the DevTools protocol
over ``--remote-debugging-pipe``: JSON messages ending in a NUL byte, commands
in on fd 3, answers and events out on fd 4.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

TIMEOUT_S = 30.0


class Browser:
    """One headless Chromium with one tab; ``with Browser(chromium, profile) as tab: …``."""

    def __init__(self, chromium: str, profile: Path, flags: tuple[str, ...]) -> None:
        self._commands_r, self._commands_w = os.pipe()
        self._answers_r, self._answers_w = os.pipe()
        child_in, child_out = self._commands_r, self._answers_w

        def on_fds_3_and_4() -> None:  # runs in the child, before exec
            high_in = fcntl.fcntl(child_in, fcntl.F_DUPFD, 10)  # never clobber one with the other
            high_out = fcntl.fcntl(child_out, fcntl.F_DUPFD, 10)
            os.dup2(high_in, 3)
            os.dup2(high_out, 4)

        self.process = subprocess.Popen(
            [chromium, *flags, "--remote-debugging-pipe", f"--user-data-dir={profile}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=on_fds_3_and_4,
            pass_fds=(3, 4),  # kept open, and inheritable, past exec
        )
        os.close(self._commands_r)
        os.close(self._answers_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        self.session = ""

    def __enter__(self) -> Browser:
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        attached = self.call("Target.attachToTarget", targetId=target, flatten=True)
        self.session = attached["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with contextlib.suppress(OSError, TimeoutError, RuntimeError):  # it may be gone already
            self.call("Browser.close", session=False)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        os.close(self._commands_w)
        os.close(self._answers_r)

    # -- the protocol ------------------------------------------------------------

    def call(self, method: str, *, session: bool = True, **params: Any) -> dict[str, Any]:
        """Send one command and return its result; a protocol error raises RuntimeError."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._commands_w, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self._events.append(answer)

    def wait_for(self, event: str) -> dict[str, Any]:
        for i, seen in enumerate(self._events):
            if seen.get("method") == event:
                return self._events.pop(i)
        while True:
            answer = self._read()
            if answer.get("method") == event:
                return answer
            self._events.append(answer)

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT_S
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._answers_r], [], [], left)[0]:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._answers_r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    # -- what a person does ------------------------------------------------------

    def open(self, url: str) -> None:
        """Navigate and wait until the page (after any redirects) has loaded."""
        self._events = [e for e in self._events if e.get("method") != "Page.loadEventFired"]
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def js(self, expression: str) -> Any:
        """The value of ``expression`` in the page (JSON-serialisable values only)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, element: str) -> None:
        """A real mouse click (move, press, release) at the centre of ``element``, a
        JavaScript expression naming one element (``document.querySelector(…)``)."""
        x, y = self.js(
            f"(() => {{ const e = {element}; e.scrollIntoView({{block: 'center'}});"
            " const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def press_enter(self) -> None:
        """Press and release Enter in the focused element, as a keyboard does."""
        keys = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}
        self.call("Input.dispatchKeyEvent", type="keyDown", text="\r", **keys)
        self.call("Input.dispatchKeyEvent", type="keyUp", **keys)

    def tab_to(self, element: str, most: int = 100) -> None:
        """Press Tab until ``element`` has the focus, as someone without a mouse would."""
        keys = {"key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9}
        for _ in range(most):
            if self.js(f"document.activeElement === ({element})"):
                return
            self.call("Input.dispatchKeyEvent", type="keyDown", **keys)
            self.call("Input.dispatchKeyEvent", type="keyUp", **keys)
        raise AssertionError(f"{most} presses of Tab never reached {element}")
