"""Runs sent to an OpenTelemetry backend over OTLP/HTTP as GenAI spans (harness.exports.otel_spans): the finished
runs of results files (`harness export --format otel`), and each run of `harness run --otel-endpoint` as it
finishes. The OpenTelemetry SDK (the `otel` extra) is imported only here, and only once something is to be sent:
a run without an endpoint never loads it.

Each run goes in one request, so a backend shows a run whole or not at all. The runs themselves are in the results
file whatever happens to the request: an endpoint that cannot be reached costs a warning, never a run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from harness.errors import UserError
from harness.run.records import RunRecord, read_table, results_files
from harness.trace.trajectory import Trajectory, trajectory_from_json

if TYPE_CHECKING:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from harness.exports.otel_spans import SpanBuilder

# Seconds one run's request may take, retries included: a backend that is down costs this once, not per run.
SEND_TIMEOUT_S = 5.0
TRACES_PATH = "/v1/traces"


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL of `endpoint`: as given when it ends in the standard /v1/traces, else a base URL
    that path is appended to (as OTLP does to OTEL_EXPORTER_OTLP_ENDPOINT): `http://localhost:6006` reaches Phoenix,
    Langfuse's documented base `https://cloud.langfuse.com/api/public/otel` reaches Langfuse."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserError(f"--otel-endpoint {endpoint!r} is not an http(s) URL: give the backend's OTLP/HTTP traces "
                        "endpoint, e.g. http://localhost:6006/v1/traces (docs/exports.md)")
    return endpoint if parts.path.rstrip("/").endswith(TRACES_PATH) else endpoint.rstrip("/") + TRACES_PATH


def _sdk() -> tuple[type[SpanBuilder], type[OTLPSpanExporter]]:
    """The span builder and the OTLP/HTTP exporter, imported now (the `otel` extra), or one sentence."""
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        from harness.exports.otel_spans import SpanBuilder
    except ImportError:
        raise UserError("sending OpenTelemetry spans needs the otel extra: pip install 'harness[otel]'") from None
    return SpanBuilder, OTLPSpanExporter


def _root_cause(error: BaseException) -> BaseException:
    """The error at the bottom of a chain (a refused connection under the HTTP library's retry errors), which is
    the one line a person needs."""
    seen: set[int] = set()
    while id(error) not in seen:
        seen.add(id(error))
        reason = getattr(error, "reason", None)
        below = (reason if isinstance(reason, BaseException) else None) or error.__cause__ or error.__context__ \
            or next((arg for arg in error.args if isinstance(arg, BaseException)), None)
        if below is None:
            break
        error = below
    return error


@contextmanager
def _exporter_logs() -> Iterator[list[str]]:
    """The OTLP exporter's log lines while it sends, kept instead of printed (its retries would print a line
    each, and the caller says in one line what went wrong), each as its error's root cause where it has one."""
    logger, kept = logging.getLogger("opentelemetry.exporter"), []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            error = next((arg for arg in record.args or () if isinstance(arg, BaseException)), None)
            kept.append(str(_root_cause(error)) if error is not None else record.getMessage())

    handler, propagate = Keep(logging.WARNING), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield kept
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


class SpanSender:
    """Sends runs' spans to one OTLP/HTTP endpoint, a run per request; headers (a backend's API key) come from
    OTEL_EXPORTER_OTLP_HEADERS or OTEL_EXPORTER_OTLP_TRACES_HEADERS, which the SDK's exporter reads."""

    def __init__(self, endpoint: str):
        self.url = traces_url(endpoint)
        builder, exporter = _sdk()
        self._builder = builder()
        self._exporter = exporter(endpoint=self.url, timeout=SEND_TIMEOUT_S)

    def send(self, record: RunRecord, trajectory: Trajectory) -> str | None:
        """Send one run; None when the backend took it, else why not (one line)."""
        from opentelemetry.sdk.trace.export import SpanExportResult

        spans = self._builder.run_spans(record, trajectory)
        with _exporter_logs() as logged:
            result = self._exporter.export(spans)
        if result is SpanExportResult.SUCCESS:
            return None
        return (logged[0] if logged else "the exporter gave no reason").splitlines()[0][:240]

    def close(self) -> None:
        self._exporter.shutdown()


class TrajectoryLines:
    """The trajectory lines next to one results file, read as the file grows: each read parses only the lines
    appended since the last one (a finished run's line is written before its row is announced), so following a
    whole suite reads the file once. The last line of a sample wins, as in harness.run.records.read_trajectory."""

    def __init__(self, results_file: Path):
        self.path = results_file.with_name(results_file.name.replace(".parquet", ".trajectories.jsonl"))
        self._offset = 0
        self._lines: dict[str, dict[str, Any]] = {}

    def _read(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, "rb") as handle:
            handle.seek(self._offset)
            for raw in handle:
                if not raw.endswith(b"\n"):
                    break  # a line still being written: read it next time
                self._offset += len(raw)
                try:
                    entry = json.loads(raw)
                except json.JSONDecodeError:
                    continue  # a line cut short by a crash
                if isinstance(entry, dict) and "sample_id" in entry:
                    self._lines[str(entry["sample_id"])] = entry

    def take(self, sample: str) -> Trajectory | None:
        """The trajectory of `sample` (forgotten once taken), or None when the file has no line for it."""
        self._read()
        entry = self._lines.pop(sample, None)
        return trajectory_from_json(entry) if entry is not None else None


def export_results(paths: list[Path], endpoint: str) -> int:
    """Send every run of the results files (or folders of them) to `endpoint`; returns the runs sent. A run
    without its trajectory line, or a backend that refuses a run, stops the export with one sentence."""
    sender, sent = SpanSender(endpoint), 0
    try:
        for path in results_files(paths):
            lines = TrajectoryLines(path)
            for row in read_table(path).to_pylist():
                record = RunRecord(**row)
                trajectory = lines.take(record.sample_id)
                if trajectory is None:
                    raise UserError(f"{lines.path}: no trajectory for {record.sample_id} (spans are built from it)")
                failure = sender.send(record, trajectory)
                if failure is not None:
                    raise UserError(f"{sender.url}: could not send {record.sample_id} ({failure}); {sent} run(s) "
                                    "sent before it")
                sent += 1
    finally:
        sender.close()
    return sent


class RunStreamer:
    """`harness run --otel-endpoint`: called with each finished run's row (the runner's on_record), sends that
    run's spans. The first failure is one warning line through `warn`, and nothing more is sent that session,
    so a backend that is down slows no other run; the runs are in the results file, and `harness export` sends
    them later."""

    def __init__(self, endpoint: str, results_file: Path, warn: Callable[[str], None]):
        self._sender = SpanSender(endpoint)
        self.url = self._sender.url
        self._lines = TrajectoryLines(results_file)
        self._results_file, self._warn = results_file, warn
        self.sent = 0
        self.stopped = False

    def __call__(self, record: RunRecord) -> None:
        if self.stopped:
            return
        try:
            trajectory = self._lines.take(record.sample_id)
            failure = (f"no trajectory line in {self._lines.path}" if trajectory is None
                       else self._sender.send(record, trajectory))
        except Exception as exc:  # an export never costs a run: the suite goes on, the reason is shown
            failure = f"{type(exc).__name__}: {exc}"
        if failure is None:
            self.sent += 1
            return
        self.stopped = True
        self._warn(f"warning: could not send {record.sample_id} to {self.url} ({failure}); no more runs are sent "
                   f"this session (later: harness export {self._results_file} --format otel --otel-endpoint {self.url})")

    def close(self) -> None:
        self._sender.close()
