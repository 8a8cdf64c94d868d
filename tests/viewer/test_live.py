"""`harness view` follows a suite while it runs: a run in flight is shown with its events so far, and a run that
finishes meanwhile appears as a row on the same page, refreshed by polling (no reload), in headless Chromium."""

import asyncio
import threading

import pytest

import harness.viewer.server as server_module
from harness.models.scripted import policy_provider
from harness.run.runner import Runner
from harness.trace.transcript_file import RUN_END
from harness.viewer import live_index, make_server
from harness.viewer.live import runs_in_flight
from tests.run.test_transcript_runs import chaining, config
from tests.viewer.chromium import dump_dom, needs_chromium

pytestmark = needs_chromium


def in_flight_files(tmp_path):
    """A finished scripted run's files put back the way they were while it ran (no row yet, no end line), and a
    function that finishes it again."""
    asyncio.run(Runner(config(tmp_path), provider=policy_provider("scripted:chain", chaining)).run())
    results = tmp_path / "smoke" / "r.parquet"
    [transcript] = (tmp_path / "smoke" / "r.transcripts").glob("*.jsonl")
    finished_text, results_bytes = transcript.read_text(), results.read_bytes()
    transcript.write_text("".join(line + "\n" for line in finished_text.splitlines() if RUN_END not in line))
    results.unlink()

    def finish() -> None:
        results.write_bytes(results_bytes)
        transcript.write_text(finished_text)

    return finish


def serve(tmp_path):
    server = make_server(live_index([tmp_path]), 0, paths=[tmp_path])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/viewer/"


def test_a_run_in_flight_is_shown_with_its_events_so_far(tmp_path):
    in_flight_files(tmp_path)
    [run] = runs_in_flight([tmp_path])
    assert run["task_id"] == "shipped-total" and [e["event"] for e in run["events"]][:2] == ["tools", "model"]
    server, url = serve(tmp_path)
    try:
        html = dump_dom(url, tmp_path / "profile")
    finally:
        server.shutdown()
    assert "In flight (1)" in html and "shipped-total · direct" in html
    assert "search_customers" in html and "list_orders" in html  # its tool calls so far
    assert '<tr data-run="' not in html  # no row yet


def test_a_run_that_finishes_appears_as_a_row_without_reloading_the_page(tmp_path, monkeypatch):
    finish = in_flight_files(tmp_path)
    asked = []

    def live_then_finished(paths):
        asked.append(1)
        if len(asked) == 2:  # the page saw the run in flight once; then it finishes
            finish()
        return live_index(paths)

    monkeypatch.setattr(server_module, "live_index", live_then_finished)
    server, url = serve(tmp_path)  # its runs.js, sent once at load, has no row
    try:
        html = dump_dom(url, tmp_path / "profile")
    finally:
        server.shutdown()
    assert len(asked) >= 3  # polled again and again, on one page
    assert '<tr data-run="0"' in html and "In flight" not in html
