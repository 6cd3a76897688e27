"""Fixtures: the scripted mock upstream, and the real `toolmend serve` binary in front of it.

`TOOLMEND_BIN` names the binary (default `target/debug/toolmend` under the repository root).
Each proxy starts on `--listen 127.0.0.1:0`, is ready once it prints its one listening line on
stderr, and must exit 0 on SIGTERM (checked at teardown, so a bad exit fails the run).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from mock_upstream import MockUpstream

ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"^toolmend serve: listening on (http://127\.0\.0\.1:\d+)$")
START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 10.0


class Proxy:
    """One `toolmend serve` child process and its stderr, drained in a thread."""

    def __init__(self, upstream: str, *flags: str) -> None:
        binary = os.environ.get("TOOLMEND_BIN", str(ROOT / "target" / "debug" / "toolmend"))
        self.argv = [binary, "serve", "--upstream", upstream, "--listen", "127.0.0.1:0", *flags]
        self.process = subprocess.Popen(
            self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, bufsize=1)
        self.lines: list[str] = []
        self.ready = threading.Event()
        self.url = ""
        threading.Thread(target=self._drain, daemon=True).start()
        if not self.ready.wait(START_TIMEOUT_S) or not self.url:
            self.process.kill()
            self.process.wait()
            raise AssertionError(
                f"{' '.join(self.argv)} printed no listening line within {START_TIMEOUT_S} s "
                f"(exit {self.process.returncode}); stderr:\n" + "\n".join(self.lines))

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            line = line.rstrip("\n")
            self.lines.append(line)
            match = LISTENING.match(line)
            if match and not self.url:
                self.url = match.group(1)
                self.ready.set()
        self.ready.set()  # exited before listening: unblock the wait

    def stop(self) -> int:
        """SIGTERM, then wait; returns the exit code (kills and fails on a hang)."""
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"toolmend serve did not exit within {STOP_TIMEOUT_S} s of SIGTERM")


@pytest.fixture(scope="session")
def upstream():
    mock = MockUpstream().start()
    yield mock
    mock.stop()


def _proxy(upstream: MockUpstream, *flags: str):
    proxy = Proxy(upstream.url, *flags)
    yield proxy
    started = time.monotonic()
    code = proxy.stop()
    assert code == 0, (f"toolmend serve exited {code} on SIGTERM after "
                       f"{time.monotonic() - started:.1f} s; stderr:\n" + "\n".join(proxy.lines))


@pytest.fixture(scope="session")
def proxy(upstream):
    """The proxy as the SDK tests use it: repairs, recovers calls leaked into content."""
    yield from _proxy(upstream, "--recover", "content", "--invalid", "pass")


@pytest.fixture(scope="session")
def proxy_recover_off(upstream):
    """The proxy with recovery off: text in `content` is never turned into calls."""
    yield from _proxy(upstream, "--recover", "off")


@pytest.fixture(scope="session")
def proxy_observe(upstream):
    """The proxy in observe mode: never alters a response."""
    yield from _proxy(upstream, "--mode", "observe", "--recover", "content")


@pytest.fixture(scope="session")
def proxy_reject(upstream):
    """The proxy with `--invalid reject`: a call that cannot be saved becomes a retry message."""
    yield from _proxy(upstream, "--invalid", "reject")
