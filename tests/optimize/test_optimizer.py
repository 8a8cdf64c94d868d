"""harness optimize in process, with a scripted model whose answers depend on the prompt it receives: it solves
a "hard" task only when its step prompt is tuned (a demo in the prompt, or an instruction containing PHRASE).
Optimizers that find a demo or the phrase improve the dev metric; the built-in prompt cannot."""

from __future__ import annotations

import json
import re

import dspy
import pytest

from harness.agents.programs import new_program, program_hash, tuned_state
from harness.agents.scaffold import GUIDED
from harness.errors import UserError
from harness.models.engine import make_lm
from harness.models.scripted import ScriptedEngine, ScriptedReply, ScriptedRequest
from harness.optimize.episodes import EpisodeEnv, EpisodeMetric, EpisodeProgram, Tracker, episode_feedback
from harness.optimize.optimizer import OptimizeConfig, optimize, split_tasks
from harness.tasks.scorers import Score
from harness.tasks.suite import load_suite

PHRASE = "Work it out step by step"
SUITE = load_suite("core")
EASY = ("lookup-customer-country", "lookup-item-quantity")  # solved with any prompt: bootstrap's demo source
TRAIN = EASY + ("chain-order-owner-company", "chain-shipped-total-by-name")
DEV = ("chain-ticket-customer-tier", "paging-supplier-count")
_TASK_FIELD = re.compile(r"\[\[ ## task ## \]\]\n(.*?)\n\n\[\[ ## ", re.DOTALL)
_MODULE_NAMES = re.compile(r"\[\[ ## module_names ## \]\]\n(.*?)\n\n\[\[ ## ", re.DOTALL)


def _current_task(request: ScriptedRequest, by_prompt: dict):
    """Chat protocols: the task is the last user message that is a task prompt; earlier ones are demos."""
    tasks = [by_prompt[m["content"]] for m in request.messages if m["role"] == "user" and m["content"] in by_prompt]
    return (tasks[-1] if tasks else None), len(tasks) > 1


def tunable_policy(suite=SUITE, easy=EASY):
    """Agent steps are right only when tuned (PHRASE in the instructions, or a demo in the prompt) or easy. Also
    answers the optimizers' own prompts (MIPROv2 proposals, GEPA reflection, SIMBA rules) with the phrase, so
    each optimizer has something to find."""
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
        if "next_tool_name" in fields:  # react: ChatAdapter fields
            match = _TASK_FIELD.search(last)
            task = by_prompt.get(match.group(1).strip()) if match else None
            tuned = task is not None and (PHRASE in request.system or len(request.messages) > 2 or task.id in easy)
            return {"next_thought": "I know." if tuned else "I cannot tell.", "next_tool_name": "final_answer",
                    "next_tool_args": {"answer": str(task.expected) if tuned else "unknown"}}
        task, has_demos = _current_task(request, by_prompt)
        if task is None:
            return {f: "Noted." for f in fields}  # MIPROv2's data and program summaries
        tuned = PHRASE in request.system or has_demos or task.id in easy
        if request.tools:  # direct: native tool calls
            return ScriptedReply(tool_calls=(("final_answer", {"answer": str(task.expected) if tuned else "unknown"}),))
        after_task = request.messages[max(i for i, m in enumerate(request.messages) if m["content"] == task.prompt):]
        if not any(m["role"] == "assistant" for m in after_task):  # code mode, first turn: run the code
            code = task.reference.strip() if tuned else "print('unknown')"
            return f"```python\n{code}\n```"
        printed = after_task[-1]["content"].removeprefix("Output:\n").strip().splitlines()
        return f"```python\nfinal_answer({(printed[-1] if printed else '')!r})\n```"

    return policy


def scripted_lm(policy=None) -> dspy.LM:
    return make_lm("scripted", ScriptedEngine(policy or tunable_policy()))


def config(optimizer: str, arm: str = "react", budget: int = 8, **changes) -> OptimizeConfig:
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
    assert train == tuple(t for t in (t.id for t in SUITE.tasks) if t in TRAIN)
    assert len(dev) == round(0.1 * len(SUITE.tasks))  # a fraction of the whole suite


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
    env = EpisodeEnv({t.id: t for t in SUITE.tasks}, "react", None, Tracker(), 60.0, 10.0, GUIDED)
    program = EpisodeProgram(env, new_program("react", GUIDED))
    with dspy.context(lm=scripted_lm(), adapter=dspy.ChatAdapter(), trace=[]):
        easy = program(task_id="lookup-customer-country")
        trace = dspy.settings.trace
        hard = program(task_id="chain-order-owner-company")
    assert (easy.passed, easy.score, hard.passed, hard.score) == (True, 1.0, False, 0.0)
    assert {id(step[0]) for step in trace} == {id(program.program.step)}  # the one tunable predictor
    assert EpisodeMetric()(None, hard) == 0.0
    feedback = EpisodeMetric(feedback=True)(None, hard, None, "program.step", None)
    assert feedback.score == 0.0 and "expected: 'Acme Corp'" in feedback.feedback and "unknown" in feedback.feedback


def test_feedback_names_sandbox_errors_and_policy_violations():
    from harness.trace.steps import CodeStep

    task = SUITE.tasks[0]
    steps = (CodeStep(code="", error="Traceback...\nNameError: name 'x' is not defined", error_kind="exception"),
             CodeStep(code="", error="POLICY_VIOLATION: import of 'subprocess'", error_kind="policy"))
    text = episode_feedback(task, "?", Score(0.0, False, "answer '?' differs"), None, steps)
    assert "Step 1: sandbox error (exception): NameError" in text
    assert "Step 2: policy violation: POLICY_VIOLATION" in text


def test_bootstrap_adds_demos_and_improves_the_held_out_dev_score():
    events = Events()
    program = optimize(config("bootstrap"), scripted_lm(), progress=events)
    assert program.dev_before.success_rate == 0.0 and program.dev_after.success_rate == 1.0
    assert program.dev_after.passed == DEV and not program.interrupted
    assert len(program.state["step"]["demos"]) >= 1
    assert program.hash != program_hash(tuned_state(new_program("react", GUIDED)))
    assert program.episodes == 2  # the two easy tasks gave max_demos=2 traces: bootstrap stops there
    assert [p for p, _, _ in events.seen] == ["dev before"] * 2 + ["optimize"] * 2 + ["dev after"] * 2
    assert events.total >= len(events.seen) - 2 * len(DEV)


def test_tuned_react_instructions_keep_each_tasks_tool_list():
    """An optimizer that rewrites the step instructions (GEPA here) rewrites only the part above the tool list:
    each episode still lists its own task's tools."""
    prompts = []
    base = tunable_policy()

    def policy(request):
        if "next_tool_name" in request.output_fields:
            prompts.append(request.system)
        return base(request)

    program = optimize(config("gepa", budget=10), scripted_lm(policy), reflection_lm=scripted_lm(policy))
    assert PHRASE in program.state["step"]["signature"]["instructions"]
    assert "get_customer" not in program.state["step"]["signature"]["instructions"]
    tuned = [p for p in prompts if PHRASE in p]
    assert tuned and all("get_customer" in p or "get_ticket" in p or "get_item" in p for p in tuned)
    assert program.dev_after.success_rate == 1.0


@pytest.mark.parametrize("optimizer, budget", [("mipro", 20), ("simba", 30)])
def test_instruction_optimizers_improve_the_dev_score(optimizer, budget):
    program = optimize(config(optimizer, budget=budget), scripted_lm(), reflection_lm=scripted_lm())
    assert program.dev_before.success_rate == 0.0
    assert program.dev_after.success_rate == 1.0
    step = program.state["step"]
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
    assert len(program.state["step"]["demos"]) == 2


def test_bootstrap_tunes_the_native_direct_arm_and_its_demos_are_whole_tool_conversations():
    requests = []
    base = tunable_policy()

    def policy(request):
        requests.append(request)
        return base(request)

    program = optimize(config("bootstrap", arm="direct"), scripted_lm(policy))
    assert (program.dev_before.success_rate, program.dev_after.success_rate) == (0.0, 1.0)
    demo = program.state["step"]["demos"][0]
    assert demo["reply"]["tool_calls"][0]["name"] == "final_answer"
    tuned = requests[-1].messages  # a dev episode after tuning: the demo, then the task
    demo_call = next(i for i, m in enumerate(tuned) if m.get("tool_calls"))
    assert tuned[demo_call + 1]["role"] == "tool"  # every tool call in a prompt is answered


@pytest.mark.sandbox
def test_code_mode_bootstrap_demos_run_in_the_sandbox(sandbox_pool):
    program = optimize(config("bootstrap", arm="codemode"), scripted_lm(), pool=sandbox_pool)
    assert (program.dev_before.success_rate, program.dev_after.success_rate) == (0.0, 1.0)
    demo = program.state["step"]["demos"][0]
    assert demo["reply"].startswith("```python") and "def get_customer(" in demo["tool_api"]


@pytest.mark.sandbox
def test_bootstrap_tunes_the_hybrid_arm_and_its_demos_carry_the_code_tools_stubs_as_an_input(sandbox_pool):
    program = optimize(config("bootstrap", arm="hybrid"), scripted_lm(), pool=sandbox_pool)
    assert (program.dev_before.success_rate, program.dev_after.success_rate) == (0.0, 1.0)
    demo = program.state["step"]["demos"][0]
    assert demo["reply"]["tool_calls"][0]["name"] == "final_answer" and "def get_customer(" in demo["tool_api"]
    assert {"run_python", "final_answer"} <= {tool["function"]["name"] for tool in demo["tools"]}


@pytest.mark.sandbox
def test_gepa_rewrites_code_mode_instructions_and_the_tool_api_stays_an_input(sandbox_pool):
    generate_prompts = []
    base = tunable_policy()

    def policy(request):
        if "Defined in the sandbox:" in request.system:
            generate_prompts.append(request.system)
        return base(request)

    program = optimize(config("gepa", arm="codemode", budget=10), scripted_lm(policy),
                       reflection_lm=scripted_lm(policy), pool=sandbox_pool)
    instructions = program.state["step"]["signature"]["instructions"]
    assert PHRASE in instructions and "def " not in instructions
    assert any(PHRASE in system for system in generate_prompts)
    assert all("def get_" in system.split("Defined in the sandbox:")[1] for system in generate_prompts)
    assert program.dev_after.success_rate == 1.0
