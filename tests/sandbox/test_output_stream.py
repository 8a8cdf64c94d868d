"""The host side of the code's streamed output, without Deno: what is kept for an execution in flight, and the
filter in front of dspy's reading of the Deno process's stdout."""

import io
import json

from harness.sandbox.guest_output import OUTPUT_PREFIX
from harness.sandbox.output_stream import OutputSoFar, shown_output, watch_output


def notification(text, dropped=0):
    return OUTPUT_PREFIX + json.dumps({"text": text, "dropped": dropped}) + "}\n"


def test_output_so_far_is_what_arrived_until_it_was_closed():
    output = OutputSoFar()
    output.add("one\n", 0)
    output.add("two", 0)
    output.close()
    output.add("after the cut\n", 0)
    assert output.text() == "one\ntwo"


def test_output_so_far_is_bounded_and_marked_as_an_executions_output_is():
    output = OutputSoFar(limit=5)
    output.add("abcde", 3)  # the guest kept 5 and says 3 more were dropped
    marker = "\n... [output truncated at 5 characters: 3 more not shown]"
    assert output.text() == shown_output("abcde", 3, 5) == "abcde" + marker
    output.add("fgh", 3)  # more than the guest may keep: the host's bound holds anyway
    assert output.text() == shown_output("abcde", 6, 5)


def test_nothing_dropped_means_no_marker():
    assert shown_output("ok\n", 0) == "ok\n"


class FakePython:
    """What watch_output touches of dspy's PythonInterpreter: its Deno process's stdout."""

    def __init__(self, text):
        self.deno_process = type("Process", (), {})()
        self.deno_process.stdout = io.StringIO(text)


def test_the_filter_hands_output_lines_over_and_passes_every_other_line_on():
    python, got = FakePython(notification("a\n") + '{"jsonrpc": "2.0", "result": {}, "id": "1"}\n'
                             + notification("b", 4) + OUTPUT_PREFIX + "not json}\n" + "last\n"), []
    watch_output(python, lambda text, dropped: got.append((text, dropped)))
    assert python.deno_process.stdout.readline() == '{"jsonrpc": "2.0", "result": {}, "id": "1"}\n'
    assert python.deno_process.stdout.readline() == "last\n"  # a malformed look-alike is dropped
    assert python.deno_process.stdout.readline() == ""
    assert got == [("a\n", 0), ("b", 4)]
    assert python.deno_process.stdout.closed is False  # the rest of the stream's interface is the stream's
