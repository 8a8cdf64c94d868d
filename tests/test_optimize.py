"""harness optimize in process, with a scripted model whose answers depend on the prompt it receives: it solves
a "hard" task only when its step prompt is tuned (a demo in the prompt, or an instruction containing PHRASE).
Optimizers that find a demo or the phrase improve the dev metric; the built-in prompt cannot."""

from __future__ import annotations

import json
import re

import dspy
import pytest

from harness.errors import UserError
from harness.models import make_lm
from harness.optimize import (
    EpisodeEnv,
    EpisodeMetric,
    EpisodeProgram,
    OptimizeConfig,
    Tracker,
    episode_feedback,
    optimize,
    split_tasks,
)
from harness.programs import new_program, program_hash, tuned_state
from harness.scoring import Score
from harness.suite import load_suite
from harness.testing import ScriptedEngine, ScriptedRequest

PHRASE = "Work it out step by step"
SUITE = load_suite("core")
EASY = ("lookup-customer-country", "lookup-item-quantity")  # solved with any prompt: bootstrap's demo source
TRAIN = EASY + ("chain-order-owner-company", "chain-shipped-total-by-name")
DEV = ("chain-ticket-customer-tier", "paging-supplier-count")
_TASK_FIELD = re.compile(r"\[\[ ## task ## \]\]\n(.*?)\n\n\[\[ ## ", re.DOTALL)
_MODULE_NAMES = re.compile(r"\[\[ ## module_names ## \]\]\n(.*?)\n\n\[\[ ## ", re.DOTALL)
_LAST_OUTPUT = re.compile(r"Output:\n(.*?)(?=### Step|\Z)", re.DOTALL)


def tunable_policy(suite=SUITE, easy=EASY):
    """Agent steps (code generation, ReAct steps) are right only when tuned or easy; extract steps report what
    the run produced. Also answers the optimizers' own prompts (MIPROv2 proposals, GEPA reflection, SIMBA rules)
    with the phrase, so each optimizer has something to find."""
    by_prompt = {t.prompt: t for t in suite.tasks}

    def policy(request: ScriptedRequest):
        fields = request.output_fields
        last = request.messages[-1]["content"] if request.messages else ""
        if "new_instruction" in fields:  # GEPA's reflection (JSONAdapter)
            return json.dumps({"new_instruction": f"{PHRASE}, then answer in the requested form."})
        if "proposed_instruction" in fields:  # MIPROv2's proposer
            return {f: f"{PHRASE}, then answer." if f == "proposed_instruction" else "Noted." for f in fields}
        if "module_advice" in fields:  # SIMBA's rule
            names = json.loads(_MODULE_NAMES.search(last).group(1))
            return {"discussion": "The better run was tuned.", "module_advice": {n: PHRASE for n in names}}
        match = _TASK_FIELD.search(last)
        task = by_prompt.get(match.group(1).strip()) if match else None
        if task is None:
            return {f: "Noted." for f in fields}  # MIPROv2's data and program summaries
        tuned = PHRASE in request.system or len(request.messages) > 2 or task.id in easy
        if "generated_code" in fields:
            code = task.reference.strip() if tuned else 'print("unknown")'
            return {"generated_code": code, "finished": True}
        if "next_tool_name" in fields:
            thought = "TUNED: I know the answer." if tuned else "I cannot tell."
            return {"next_thought": thought, "next_tool_name": "finish", "next_tool_args": {}}
        if "reasoning" in fields:  # direct extract: right only after a tuned step
            known = "TUNED:" in last.split("[[ ## trajectory ## ]]")[-1]
            return {"reasoning": "From the trajectory.", "answer": str(task.expected) if known else "unknown"}
        outputs = _LAST_OUTPUT.findall(last.split("[[ ## trajectory ## ]]")[-1].split("Respond with")[0])
        lines = outputs[-1].strip().splitlines() if outputs else []
        return {"answer": lines[-1] if lines else "unknown"}

    return policy


def scripted_lm(policy=None) -> dspy.LM:
    return make_lm("scripted", ScriptedEngine(policy or tunable_policy()))


def config(optimizer: str, arm: str = "direct", budget: int = 8, **changes) -> OptimizeConfig:
    return OptimizeConfig(suite=SUITE, arm=arm, optimizer=optimizer, model="scripted", train_ids=TRAIN,
                          dev_ids=DEV, budget=budget, **changes)


class Events:
    def __init__(self):
        self.total, self.seen = 0, []

    def planned(self, episodes: int) -> None:
        self.total = episodes

    def episode(self, phase: str, task_id: str, score: float) -> None:
        self.seen.append((phase, task_id, score))


def test_split_fractions_are_seeded_and_dev_is_held_out():
    train, dev = split_tasks(SUITE, "0.5", None, seed=3)
    assert len(train) == round(len(SUITE.tasks) / 2) and set(train).isdisjoint(dev)
    assert set(train) | set(dev) == {t.id for t in SUITE.tasks}
    assert split_tasks(SUITE, "0.5", None, seed=3) == (train, dev)
    assert split_tasks(SUITE, "0.5", None, seed=4) != (train, dev)
    train, dev = split_tasks(SUITE, ",".join(TRAIN), "0.1", seed=0)
    assert train == tuple(t for t in (t.id for t in SUITE.tasks) if t in TRAIN) and len(dev) == 3


@pytest.mark.parametrize("train, dev, fragment", [
    ("lookup-customer-country", "lookup-customer-country", "held out"),
    ("nope", None, "no task 'nope'"),
    ("1.5", None, "fraction"),
])
def test_bad_splits_are_user_errors(train, dev, fragment):
    from harness.errors import UserError

    with pytest.raises(UserError, match=fragment):
        split_tasks(SUITE, train, dev, seed=0)


def test_the_episode_scores_with_the_suite_and_the_metric_reads_it():
    env = EpisodeEnv({t.id: t for t in SUITE.tasks}, "direct", None, Tracker(), 60.0, 10.0)
    program = EpisodeProgram(env, new_program("direct"))
    with dspy.context(lm=scripted_lm(), adapter=dspy.ChatAdapter(), trace=[]):
        easy = program(task_id="lookup-customer-country")
        trace = dspy.settings.trace
        hard = program(task_id="chain-order-owner-company")
    assert (easy.passed, easy.score, hard.passed, hard.score) == (True, 1.0, False, 0.0)
    assert {id(step[0]) for step in trace} == {id(program.program.react), id(program.program.extract.predict)}
    assert EpisodeMetric()(None, hard) == 0.0
    feedback = EpisodeMetric(feedback=True)(None, hard, None, "program.react", None)
    assert feedback.score == 0.0 and "expected: 'Acme Corp'" in feedback.feedback and "unknown" in feedback.feedback


def test_feedback_names_sandbox_errors_and_policy_violations():
    from harness.agents.base import AgentResult, Step

    task = SUITE.tasks[0]
    steps = (Step("code", {"error": "Traceback...\nNameError: name 'x' is not defined", "error_kind": "exception"}),
             Step("code", {"error": "POLICY_VIOLATION: import of 'subprocess'", "error_kind": "policy"}))
    text = episode_feedback(task, "?", Score(0.0, False, "answer '?' differs"), None, AgentResult("?", steps))
    assert "Step 1: sandbox error (exception): NameError" in text
    assert "Step 2: policy violation: POLICY_VIOLATION" in text


def test_bootstrap_adds_demos_and_improves_the_held_out_dev_score():
    events = Events()
    program = optimize(config("bootstrap"), scripted_lm(), progress=events)
    assert program.dev_before.success_rate == 0.0 and program.dev_after.success_rate == 1.0
    assert program.dev_after.passed == DEV and not program.interrupted
    assert len(program.state["react"]["demos"]) >= 1
    assert program.hash != program_hash(tuned_state(new_program("direct")))
    assert program.episodes == 2  # the two easy tasks gave max_demos=2 traces: bootstrap stops there
    assert [p for p, _, _ in events.seen] == ["dev before"] * 2 + ["optimize"] * 2 + ["dev after"] * 2
    assert events.total >= len(events.seen) - 2 * len(DEV)


def test_tuned_direct_instructions_keep_each_tasks_tool_list():
    """An optimizer that rewrites the step instructions (GEPA here) rewrites only the part above the tool list:
    each episode still lists its own task's tools."""
    prompts = []
    base = tunable_policy()

    def policy(request):
        if "next_tool_name" in request.output_fields:
            prompts.append(request.system)
        return base(request)

    program = optimize(config("gepa", budget=10), scripted_lm(policy), reflection_lm=scripted_lm(policy))
    assert PHRASE in program.state["react"]["signature"]["instructions"]
    assert "get_customer" not in program.state["react"]["signature"]["instructions"]
    tuned = [p for p in prompts if PHRASE in p]
    assert tuned and all("get_customer" in p or "get_ticket" in p or "get_item" in p for p in tuned)
    assert program.dev_after.success_rate == 1.0


@pytest.mark.parametrize("optimizer, budget", [("mipro", 20), ("simba", 30)])
def test_instruction_optimizers_improve_the_dev_score(optimizer, budget):
    program = optimize(config(optimizer, budget=budget), scripted_lm(), reflection_lm=scripted_lm())
    assert program.dev_before.success_rate == 0.0
    assert program.dev_after.success_rate == 1.0
    step = program.state["react"]
    assert PHRASE in step["signature"]["instructions"] or step["demos"]


def test_mipro_without_optuna_says_how_to_install_it(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "optuna" else real(name, *a))
    with pytest.raises(UserError, match=r"pip install 'harness\[optimize\]'"):
        optimize(config("mipro"), scripted_lm(), reflection_lm=scripted_lm())


def test_an_interrupt_keeps_the_demos_bootstrapped_so_far(monkeypatch):
    calls = {"n": 0}
    base = tunable_policy()

    def policy(request):
        calls["n"] += 1
        if calls["n"] == 9:  # the third train episode (a hard task) after two dev and two easy train episodes
            raise KeyboardInterrupt
        return base(request)

    program = optimize(config("bootstrap", max_demos=3), scripted_lm(policy))
    assert program.interrupted and program.dev_after is None
    assert len(program.state["react"]["demos"]) == 2


@pytest.mark.sandbox
def test_code_mode_bootstrap_demos_run_in_the_sandbox(sandbox_pool):
    program = optimize(config("bootstrap", arm="codemode"), scripted_lm(), pool=sandbox_pool)
    assert (program.dev_before.success_rate, program.dev_after.success_rate) == (0.0, 1.0)
    demo = program.state["generate"]["demos"][0]
    assert demo["finished"] is True and "def get_customer(" in demo["tool_api"]


@pytest.mark.sandbox
def test_gepa_rewrites_code_mode_instructions_and_the_tool_api_stays_an_input(sandbox_pool):
    generate_prompts = []
    base = tunable_policy()

    def policy(request):
        if "generated_code" in request.output_fields:
            generate_prompts.append((request.system, request.messages[-1]["content"]))
        return base(request)

    program = optimize(config("gepa", arm="codemode", budget=10), scripted_lm(policy),
                       reflection_lm=scripted_lm(policy), pool=sandbox_pool)
    instructions = program.state["generate"]["signature"]["instructions"]
    assert PHRASE in instructions and "def " not in instructions
    assert any(PHRASE in system for system, _ in generate_prompts)
    assert all("[[ ## tool_api ## ]]" in user and "def " in user for _, user in generate_prompts)
    assert program.dev_after.success_rate == 1.0
