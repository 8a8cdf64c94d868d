"""Every script in benchmarks/ still runs: each at its smallest size (`--smallest`), in a child process, as a
user would start it. The figures are not asserted (machines here are noisy); a refactor that breaks a benchmark
fails here instead of in the next person's measurement."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_"))
# What a script needs beyond the package, as the markers of tests/conftest.py name it.
NEEDS = {"local_model.py": pytest.mark.local_model, "ray_executor.py": pytest.mark.ray,
         "sandbox.py": pytest.mark.sandbox, "bridge_throughput.py": pytest.mark.sandbox,
         "gathered_calls.py": pytest.mark.sandbox, "arms_as_shipped.py": pytest.mark.sandbox,
         "tools_as_files.py": pytest.mark.sandbox, "catalogue_sweep.py": pytest.mark.sandbox,
         "js_codemodes.py": pytest.mark.sandbox, "output_streaming.py": pytest.mark.sandbox,
         "llama_steps.py": pytest.mark.local_model,
         "batched_local.py": pytest.mark.local_model, "conversation_contexts.py": pytest.mark.local_model}


def test_there_are_benchmarks_to_check():
    assert {"prefix_cache.py", "local_model.py", "load.py"} <= {p.name for p in SCRIPTS}


# Each script runs in a child process (a few seconds to a minute): the integration tier, out of `make test-quick`.
@pytest.mark.integration
@pytest.mark.parametrize("script", [pytest.param(p, id=p.name, marks=[NEEDS[p.name]] if p.name in NEEDS else [])
                                    for p in SCRIPTS])
def test_a_benchmark_runs_at_its_smallest_size(script: Path, tmp_path: Path):
    # the embedded model's benchmarks decode in child processes: 2-4 minutes alone, over 10 on shared cores
    limit = 1800 if NEEDS.get(script.name) == pytest.mark.local_model else 600
    done = subprocess.run([sys.executable, str(script), "--smallest"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=limit, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "a benchmark prints its table"


@pytest.mark.integration
def test_the_reference_harness_comparison_runs_the_checkouts_main_py_beside_the_harness(tmp_path: Path):
    """--reference-harness on the look-alike checkout: its main.py (written by the tests: no model, a fixed script)
    runs in a child process through the same path as the real one's, and the harness on a scripted model."""
    done = subprocess.run([sys.executable, str(BENCHMARKS / "m3tooleval.py"), "--smallest", "--reference-harness"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    # the look-alike main.py fails library_shelf tasks; the scripted harness model solves every task
    assert "| library_shelf/second_title | json (direct) | fail, 10 turns | pass, 3 turns | no | step 2: reference " \
           "answer 'unknown', harness action [next_book] |" in lines
    assert "| unit_converter/boiling_point | code (codemode) | pass, 1 turn | pass, 2 turns | yes | step 1: " \
           "reference answer '100.0', harness action [to_celsius] |" in lines
    assert "agreement on success: 4/8 (50%) of task x mode pairs" in lines


def test_reference_replies_are_read_as_the_benchmark_reads_them():
    sys.path.insert(0, str(BENCHMARKS.parent))
    from benchmarks._m3tooleval_reference import divergence, reference_move, task_filter

    tools = ("view", "click_url")
    assert reference_move("Thought: x\nAction:\nprint(view('a'))\nEnd Action", "code", tools) == ("action", "view")
    assert reference_move('Action: {"tool": "click_url", "args": [1]} End Action', "json", tools) == \
        ("action", "click_url")
    assert reference_move("Answer: 42", "json", tools) == ("answer", "42")
    assert reference_move("Action: view End Action Answer: 1", "text", tools) == ("invalid", "")
    assert divergence((("action", "view"), ("answer", "1")), (("action", "view"),)) == "step 2: the harness had ended"
    assert divergence((("action", "view"),), (("action", "view"),)) == ""
    assert task_filter(("a/b.c",)) == r"^(a/b\.c)$"


def test_claims_become_a_rubric_with_the_same_pass_line():
    sys.path.insert(0, str(BENCHMARKS.parent))
    from benchmarks.judge_variants import claims_as_rubric, reworded
    from harness.analysis.labels import load_labels

    items = load_labels(BENCHMARKS.parent / "tasks" / "labels" / "open.yaml").items
    profile = next(i for i in items if i.task.id == "customer-profile")  # 5 claims, threshold 0.75
    judged = claims_as_rubric(profile)
    assert judged.scorer.name == "rubric" and judged.claims == {} and judged.labels == profile.labels
    assert judged.scorer.criteria.startswith("States at least 4 of these 5 facts")
    assert "5. One order (O-00100, a Gadget for 495 USD) was cancelled" in judged.scorer.criteria
    assert reworded(profile) is None  # a claims task has no criteria to reword
    history = next(i for i in items if i.task.id == "history-checked")
    assert reworded(history).scorer.show_calls and reworded(history).scorer.criteria != history.scorer.criteria


def test_the_tool_call_server_reads_calls_as_the_embedded_engine_and_refuses_what_it_cannot_render():
    sys.path.insert(0, str(BENCHMARKS.parent))
    from benchmarks._tool_call_server import BadRequest, reply_message, template_messages

    message = reply_message('I will look.\n<tool_call>\n{"name": "ls", "arguments": {"a": true}}\n</tool_call>')
    assert message["content"] == "I will look."
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]] == [("ls", '{"a": true}')]
    assert reply_message('<tool_call>{"name": "ls", "arguments": {}}</tool_call>')["content"] is None
    assert reply_message("<tool_call>not json</tool_call>") == {"role": "assistant",
                                                                 "content": "<tool_call>not json</tool_call>"}
    # BFCL's next request after a call: the assistant message's content is null (llama.cpp's own server refuses it)
    called = {"role": "assistant", "content": None,
              "tool_calls": [{"id": "c", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}
    assert template_messages([called])[0]["content"] == ""
    with pytest.raises(BadRequest, match="role"):
        template_messages([{"role": "robot", "content": "hi"}])
    with pytest.raises(BadRequest, match="JSON object"):
        template_messages([{**called, "tool_calls": [{"function": {"name": "ls", "arguments": "[1"}}]}])


def test_bfcls_recorded_responses_and_the_harness_calls_are_compared_step_by_step():
    sys.path.insert(0, str(BENCHMARKS.parent))
    from benchmarks.bfcl_own_harness import bfcl_step_calls, first_difference

    assert bfcl_step_calls([{"cd": '{"folder": "document"}'}, {"ls": "{}"}]) == ["cd(folder='document')", "ls()"]
    assert bfcl_step_calls("I cannot do that.") == []  # a reply without a call is recorded as its text
    theirs = [[["cd(folder='document')"], ["ls()"]], [[]]]
    assert first_difference(theirs, theirs) == "none"
    ours = [[["cd(folder='document')"], ["pwd()"]], [[]]]
    assert first_difference(ours, theirs) == "turn 1 step 2: BFCL ['ls()'], harness ['pwd()']"
    assert first_difference(theirs[:1], theirs) == "turns: BFCL 2, harness 1"


def test_the_reference_model_answers_each_turn_of_the_entry_it_recognises_and_drops_a_call_when_perturbed(tmp_path):
    sys.path.insert(0, str(BENCHMARKS.parent))
    from benchmarks._tool_call_server import BadRequest
    from benchmarks.bfcl_own_harness import ReferenceModel
    from harness.adapters import bfcl_package
    from tests.adapters.bfcl_lookalike import write_bfcl_lookalike
    from tests.adapters.test_bfcl import _forget_bfcl

    _forget_bfcl()
    saved = list(sys.path)
    try:
        bfcl = bfcl_package.load_bfcl(str(write_bfcl_lookalike(tmp_path / "gorilla")))
        model = ReferenceModel(bfcl, ["multi_turn_base_0", "multi_turn_base_1"], frozenset({"multi_turn_base_1"}))

        def reply(*messages: dict) -> dict:
            return model.complete({"messages": list(messages)})["choices"][0]["message"]

        opening = {"role": "user", "content": "Add 2 to the counter."}
        call = reply({"role": "system", "content": "rules"}, opening)["tool_calls"]
        assert [(c["function"]["name"], c["function"]["arguments"]) for c in call] == [("increment", '{"by": 2}')]
        done = {"role": "assistant", "content": None, "tool_calls": call}
        result = {"role": "tool", "tool_call_id": call[0]["id"], "content": "12"}
        assert reply(opening, done, result) == {"role": "assistant", "content": "Done."}  # step 1 ends the turn
        second = reply(opening, done, result, {"role": "assistant", "content": "Done."},
                       {"role": "user", "content": "Now add 3."})["tool_calls"]
        assert second[0]["function"]["arguments"] == '{"by": 3}'
        # perturbed: its one turn's one call is dropped, so the turn is answered without a call
        assert reply({"role": "user", "content": "Echo hi twice."}) == {"role": "assistant", "content": "Done."}
        with pytest.raises(BadRequest, match="no entry has these user turns"):
            reply({"role": "user", "content": "Something else."})
    finally:
        sys.path[:] = saved
        _forget_bfcl()
