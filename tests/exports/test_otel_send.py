"""Runs sent over OTLP/HTTP: finished runs of a results file, each run as the runner finishes it, what a backend
that cannot be reached costs (one warning, no run), and the endpoint's URL. The receiver is a local HTTP server
that decodes what it gets with OpenTelemetry's own protobuf types."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from harness.errors import UserError
from harness.exports import otel
from harness.exports.otel import RunStreamer, export_results, traces_url
from tests.exports.otel_runs import closed_port_url, scripted_runs


class Receiver:
    """An OTLP/HTTP traces endpoint on a free local port, keeping each request's spans by name."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        received = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append(ExportTraceServiceRequest.FromString(body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"

    def span_names(self, request: ExportTraceServiceRequest) -> list[str]:
        return sorted(span.name for resource in request.resource_spans for scope in resource.scope_spans
                      for span in scope.spans)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return scripted_runs(tmp_path_factory.mktemp("otel"))


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    thread = threading.Thread(target=found.server.serve_forever, daemon=True)
    thread.start()
    yield found
    found.server.shutdown()
    found.server.server_close()


def test_export_sends_every_run_of_a_results_file_one_request_each(results, receiver):
    assert export_results([results.parent], receiver.url) == 2
    assert len(receiver.requests) == 2
    names = [receiver.span_names(r) for r in receiver.requests]
    assert ["invoke_agent direct" in n for n in names] == [True, True]
    assert sorted(n.count("execute_tool get_customer") for n in names) == [0, 1]  # the timed-out run made none


def test_the_runner_streams_each_run_as_it_finishes(tmp_path, receiver):
    warnings: list[str] = []
    holder: dict[str, RunStreamer] = {}

    def on_record(record):
        if "stream" not in holder:  # the results file's path is known once the run has its id: here, "otel"
            holder["stream"] = RunStreamer(receiver.url, tmp_path / "out" / "mini" / "otel.parquet", warnings.append)
        holder["stream"](record)
        assert len(receiver.requests) == holder["stream"].sent  # sent before the next run is announced

    scripted_runs(tmp_path, on_record=on_record)
    assert holder["stream"].sent == 2 and warnings == []
    resource = receiver.requests[0].resource_spans[0].resource
    assert {a.key: a.value.string_value for a in resource.attributes}["service.name"] == "harness"


def test_a_backend_that_cannot_be_reached_is_one_warning_and_no_lost_run(tmp_path, monkeypatch):
    monkeypatch.setattr(otel, "SEND_TIMEOUT_S", 0.5)
    warnings: list[str] = []
    url = closed_port_url()
    stream = RunStreamer(url, tmp_path / "out" / "mini" / "otel.parquet", warnings.append)
    results = scripted_runs(tmp_path, on_record=stream)
    assert len(warnings) == 1 and warnings[0].startswith("warning: could not send ")
    assert url in warnings[0] and "harness export" in warnings[0]
    assert stream.stopped and stream.sent == 0
    from harness.run.records import read_table
    assert read_table(results).num_rows == 2


def test_export_to_a_backend_that_cannot_be_reached_is_one_sentence(results, monkeypatch):
    monkeypatch.setattr(otel, "SEND_TIMEOUT_S", 0.5)
    with pytest.raises(UserError, match=r"could not send .*0 run\(s\) sent before it"):
        export_results([results], closed_port_url())


def test_export_of_results_without_their_trajectories_says_so(results, tmp_path, receiver):
    alone = tmp_path / results.name
    alone.write_bytes(results.read_bytes())
    with pytest.raises(UserError, match="no trajectory for"):
        export_results([alone], receiver.url)


@pytest.mark.parametrize("given, url", [
    ("http://localhost:6006", "http://localhost:6006/v1/traces"),
    ("http://localhost:6006/", "http://localhost:6006/v1/traces"),
    ("https://cloud.langfuse.com/api/public/otel", "https://cloud.langfuse.com/api/public/otel/v1/traces"),
    ("https://cloud.langfuse.com/api/public/otel/v1/traces", "https://cloud.langfuse.com/api/public/otel/v1/traces"),
    ("http://localhost:5000/v1/traces/", "http://localhost:5000/v1/traces/"),
])
def test_a_base_endpoint_gets_the_standard_traces_path_and_a_traces_url_is_kept(given, url):
    assert traces_url(given) == url


@pytest.mark.parametrize("given", ["localhost:6006", "grpc://localhost:4317", "phoenix"])
def test_an_endpoint_that_is_not_an_http_url_is_one_sentence(given):
    with pytest.raises(UserError, match="is not an http"):
        traces_url(given)


def test_sending_without_the_otel_extra_is_one_sentence_naming_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)  # not installed
    with pytest.raises(UserError, match=r"needs the otel extra: pip install 'harness\[otel\]'"):
        otel.SpanSender("http://localhost:6006")
