"""`harness view`'s local server: 127.0.0.1 only, the viewer under /viewer/, a report (if given) at
/report.html, so the report's links into the viewer (viewer/index.html#...) and the viewer's link back
(../report.html) work the same as in a static copy written next to a report."""

from __future__ import annotations

import re
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from harness.errors import UserError
from harness.viewer.data import RunIndex, index_payload, script
from harness.viewer.live import live_index, runs_in_flight
from harness.viewer.site import ASSETS, CONTENT_TYPES, STATIC, run_script, runs_script

_RUN = re.compile(r"^/viewer/data/run/(\d+)\.js$")


def make_server(index: RunIndex, port: int, report: Path | None = None,
                paths: list[Path] | None = None) -> ThreadingHTTPServer:
    """A server for these runs (port 0: any free port); call serve_forever() on it. With `paths` (the results files
    or folders the index came from) it also answers `data/live.js`: the rows as they are now and the runs in
    flight, so a page follows a suite while it runs (harness.viewer.live)."""
    report_href = "../report.html" if report else None
    runs = runs_script(index, report_href)
    current = {"index": index}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0].split("#", 1)[0]
            if path in ("/", "/viewer"):
                self.send_response(HTTPStatus.FOUND)
                self.send_header("Location", "/viewer/")
                self.end_headers()
                return
            if path == "/viewer/":
                path = "/viewer/index.html"
            match = _RUN.match(path)
            if path.startswith("/viewer/") and path[len("/viewer/"):] in ASSETS:
                self._send(path, (STATIC / path[len("/viewer/"):]).read_bytes())
            elif path == "/viewer/data/runs.js":
                self._send(path, runs)
            elif path == "/viewer/data/live.js" and paths is not None:
                current["index"] = live_index(paths)  # run pages follow the rows the page now has
                self._send(path, script("live", {**index_payload(current["index"], report_href),
                                                 "in_flight": runs_in_flight(paths)}))
            elif match and int(match.group(1)) < len(current["index"].rows):
                self._send(path, run_script(current["index"], int(match.group(1))))
            elif path == "/report.html" and report is not None:
                self._send(path, report.read_bytes())
            else:
                self.send_error(HTTPStatus.NOT_FOUND)

        def _send(self, path: str, body: bytes) -> None:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", CONTENT_TYPES[Path(path).suffix])
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # quiet: the terminal shows the URL, not every request

    try:
        return ThreadingHTTPServer(("127.0.0.1", port), Handler)
    except OSError as exc:
        raise UserError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); choose another --port") from None
