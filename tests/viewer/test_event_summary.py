"""How the live page shows one event of a run in flight: a run's end says its error, or its answer."""

from harness.trace.errors import RunError
from harness.trace.events import EndEvent, event_to_dict
from harness.viewer.live import event_summary


def test_a_runs_end_shows_its_error_or_else_its_answer():
    failed = event_summary(event_to_dict(EndEvent("", RunError("timeout", "run exceeded 5 s"), id=9, parent=0)))
    assert (failed["event"], failed["text"], failed["id"]) == ("end", "timeout: run exceeded 5 s", 9)
    assert event_summary(event_to_dict(EndEvent("27.0", None)))["text"] == "27.0"
