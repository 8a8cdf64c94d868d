"""Runs against model servers and the response cache: a new run measures, a resumed run reuses its own calls, a
replay reuses any run's only when asked, and two servers that serve one model name never share answers. The servers
are minimal OpenAI-compatible ones on loopback (tests/models/openai_stub.py), reached through LiteLLM as a user's
`--model openai/model --api-base URL` is."""

import json

import pytest

from harness.run.config import RunConfig
from harness.run.evaluate import evaluate
from harness.run.manifest import resume_config
from harness.tasks.suite import load_suite
from tests.models.openai_stub import OpenAIStub
from tests.run.test_runner import SUITE_YAML


@pytest.fixture
def suite(tmp_path):
    path = tmp_path / "mini.yaml"
    path.write_text(SUITE_YAML)
    return load_suite(str(path))


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")


def run_on(server: OpenAIStub, suite, tmp_path, run_id: str, **options):
    """One direct-arm run of the task 'country' on the server; its one row."""
    result = evaluate(suite, model="openai/model", arms=["direct"], api_base=server.url, out_dir=tmp_path / "out",
                      run_id=run_id, task_ids=("country",), **options)
    (row,) = result.frame.itertuples()
    return row


def test_two_servers_serving_one_model_name_give_their_own_answers(suite, tmp_path):
    with OpenAIStub("IN") as india, OpenAIStub("US") as states:
        first = run_on(india, suite, tmp_path, "india", cache="replay")
        second = run_on(states, suite, tmp_path, "states", cache="replay")  # replay: any run's answer, if keyed alike
    assert (first.answer, second.answer) == ("IN", "US")
    assert second.cached_llm_calls == 0 and states.chat_requests == 1


def test_one_port_serving_other_weights_is_asked_again_even_in_replay(suite, tmp_path):
    with OpenAIStub("IN", models=[{"id": "model", "root": "/models/a.gguf"}]) as server:
        run_on(server, suite, tmp_path, "a", cache="replay")
        server.models, server.reply = [{"id": "model", "root": "/models/b.gguf"}], "US"  # restarted with other weights
        again = run_on(server, suite, tmp_path, "b", cache="replay")
    assert again.answer == "US" and again.cached_llm_calls == 0 and server.chat_requests == 2


def test_a_new_run_id_asks_the_model_again_and_replay_only_when_asked(suite, tmp_path):
    with OpenAIStub("IN") as server:
        first = run_on(server, suite, tmp_path, "first")
        second = run_on(server, suite, tmp_path, "second")
        assert (first.cached_llm_calls, second.cached_llm_calls, server.chat_requests) == (0, 0, 2)
        replayed = run_on(server, suite, tmp_path, "replayed", cache="replay")
        assert replayed.cached_llm_calls == replayed.llm_calls == 1 and server.chat_requests == 2
        measured = run_on(server, suite, tmp_path, "measured", cache="off")
        assert measured.cached_llm_calls == 0 and server.chat_requests == 3
    assert [r.cache_mode for r in (first, second, replayed, measured)] == ["resume", "resume", "replay", "off"]


def test_a_resumed_run_reuses_its_own_calls(suite, tmp_path):
    with OpenAIStub("IN") as server:
        run_on(server, suite, tmp_path, "killed")
        results = tmp_path / "out" / "mini"
        for written in ("killed.parquet", "killed.trajectories.jsonl"):  # killed before its row was written
            (results / written).unlink()
        for transcript in (results / "killed.transcripts").glob("*.jsonl"):  # ... and before its run_end line
            transcript.write_text("".join(line for line in transcript.read_text().splitlines(keepends=True)
                                          if '"run_end"' not in line))
        config = resume_config("killed", tmp_path / "out")
        assert config.cache == "resume"
        resumed = run_on(server, suite, tmp_path, "killed")
    assert resumed.cached_llm_calls == resumed.llm_calls == 1 and server.chat_requests == 1


def test_the_manifest_records_the_cache_mode_and_an_older_manifest_resumes_with_its_own_calls(suite, tmp_path):
    with OpenAIStub("IN") as server:
        run_on(server, suite, tmp_path, "r1", cache="replay")
    manifest = tmp_path / "out" / "mini" / "r1.run.json"
    data = json.loads(manifest.read_text())
    assert data["cache"] == "replay" and resume_config("r1", tmp_path / "out").cache == "replay"
    for recorded, mode in ((True, "resume"), (False, "off")):  # written before cache modes existed
        manifest.write_text(json.dumps({**data, "cache": recorded}))
        assert resume_config("r1", tmp_path / "out").cache == mode


def test_an_unknown_cache_mode_is_one_line_naming_it(suite, tmp_path):
    from harness.errors import UserError

    with pytest.raises(UserError, match=r"^cache='sometimes': give one of 'resume', 'replay', 'off'"):
        evaluate(suite, model="scripted:reference", arms=["direct"], out_dir=tmp_path, cache="sometimes")


def test_the_api_before_cache_modes_still_says_on_or_off(suite, tmp_path):
    assert RunConfig(suite=suite, model="scripted:reference", cache=False).cache == "off"
    assert RunConfig(suite=suite, model="scripted:reference", cache=True).cache == "resume"
