"""A run's transcript file: a start line, each event as it is appended, an end line; a line cut short by a hard kill
is never read."""

import json

from harness.trace.errors import RunError
from harness.trace.events import event_from_dict
from harness.trace.transcript import Transcript
from harness.trace.transcript_file import (
    TranscriptWriter,
    end_transcript,
    read_end_line,
    read_transcript_file,
    transcript_file_name,
)


def test_each_event_is_on_disk_as_soon_as_it_is_appended(tmp_path):
    path = tmp_path / "run.jsonl"
    transcript = Transcript(TranscriptWriter(path, {"sample_id": "t/direct/m/0"}))
    transcript.answer("42")
    lines = path.read_text().splitlines()  # read while the file is still open: flushed, not buffered
    assert [json.loads(line)["event"] for line in lines] == ["run_start", "answer"]
    assert event_from_dict(json.loads(lines[1])).text == "42"


def test_a_file_without_its_end_line_is_a_run_in_flight_and_a_cut_line_is_left_out(tmp_path):
    path = tmp_path / "run.jsonl"
    transcript = Transcript(TranscriptWriter(path, {"sample_id": "s"}))
    transcript.answer("a")
    transcript.ended("", RunError("timeout", "slow"))
    with open(path, "a") as handle:
        handle.write('{"event": "answer", "text": "hal')  # the kill landed while this line was written
    found = read_transcript_file(path)
    assert found is not None and found.sample_id == "s" and found.end is None
    assert [line["event"] for line in found.events] == ["answer", "end"]


def test_the_end_line_makes_the_run_finished(tmp_path):
    path = tmp_path / "run.jsonl"
    writer = TranscriptWriter(path, {"sample_id": "s"})
    writer.close()
    end_transcript(path, {"sample_id": "s", "answer": "x"})
    found = read_transcript_file(path)
    assert found is not None and found.end is not None and found.end["answer"] == "x"


def test_file_names_escape_the_sample_ids_slashes_and_colons():
    assert transcript_file_name("t1/direct/scripted:reference/0") == "t1%2Fdirect%2Fscripted%3Areference%2F0.jsonl"


def test_the_end_line_is_read_from_the_files_tail_and_a_cut_end_line_is_not_trusted(tmp_path):
    path = tmp_path / "run.jsonl"
    writer = TranscriptWriter(path, {"sample_id": "s"})
    writer.close()
    assert read_end_line(path) is None  # in flight
    end_transcript(path, {"sample_id": "s", "answer": "x"})
    assert read_end_line(path)["answer"] == "x"
    text = path.read_text()
    path.write_text(text[: len(text) - 5])  # the end line cut short by the kill
    assert read_end_line(path) is None
