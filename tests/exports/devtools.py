"""Headless Chromium driven over its DevTools protocol: a page's DOM once the page shows a text.

`--dump-dom --virtual-time-budget=N` (tests/viewer/chromium.py) dumps inspect view's pages before most of them have
rendered: the viewer reads logs in web workers, which virtual time does not wait for, so the same command lists the
samples in one try and none in the next. These tests wait in real time for the text instead, then take the DOM.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp

from tests.viewer.chromium import CHROMIUM

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync", "--window-size=1400,1000")


class Tab:
    """One page of the browser: protocol calls by id (the events the browser sends meanwhile are skipped)."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse):
        self.socket, self.ids = socket, itertools.count(1)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        sent = next(self.ids)
        await self.socket.send_json({"id": sent, "method": method, "params": params})
        async for message in self.socket:
            reply = json.loads(message.data)
            if reply.get("id") == sent:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
        raise RuntimeError(f"{method}: the browser closed the connection")

    async def value(self, expression: str) -> Any:
        return (await self.call("Runtime.evaluate", expression=expression, returnByValue=True))["result"].get("value")


def _devtools_port(profile: Path, browser: subprocess.Popen, timeout_s: float) -> int:
    """The port the browser chose (`--remote-debugging-port=0`), from the file it writes into its profile."""
    active = profile / "DevToolsActivePort"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and browser.poll() is None:
        if active.exists() and active.read_text().strip():
            return int(active.read_text().splitlines()[0])
        time.sleep(0.1)
    raise RuntimeError(f"chromium did not open its DevTools port (exit code {browser.poll()})")


async def _rendered(port: int, url: str, text: str, timeout_s: float) -> str:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{port}/json") as listing:
            page = next(t for t in await listing.json() if t["type"] == "page")
        async with http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as socket:
            tab = Tab(socket)
            await tab.call("Page.navigate", url=url)
            deadline = time.monotonic() + timeout_s
            probe = f"!!document.body && document.body.innerText.includes({json.dumps(text)})"
            while not await tab.value(probe):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{url} did not show {text!r} within {timeout_s:.0f} s")
                await asyncio.sleep(0.25)
            return await tab.value("document.documentElement.outerHTML")


def rendered_dom(url: str, text: str, profile: Path, timeout_s: float = 60.0) -> str:
    """The DOM of `url` once its page shows `text` (a TimeoutError when it does not within `timeout_s`)."""
    browser = subprocess.Popen([str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0",
                                "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        return asyncio.run(_rendered(_devtools_port(profile, browser, 30.0), url, text, timeout_s))
    finally:
        browser.terminate()
        browser.wait(timeout=30)
