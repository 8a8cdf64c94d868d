"""Conversation tasks: a scripted agent and a scripted user talk until the user ends it; the user's messages are the
agent's observations, its LM calls are recorded apart, and no scaffold rule refuses a message to the user."""

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from harness.agents.conversation import UserSimulator, shown_text, user_ended
from harness.agents.scaffold import GUIDED
from harness.models.engine import make_lm
from harness.models.scripted import (
    ScriptedEngine,
    ScriptedReply,
    ScriptedRequest,
    policy_provider,
    user_script_policy,
)
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from harness.tasks.task import Suite, UserScenario
from tests.run.test_runner import SUITE_YAML  # task 0: customer C-0007's country, IN

USER_LINES = ("Hi, in which country is my account?", "My customer id is C-0007.", "Great, thanks! ###STOP###")


def talking_agent(task, arm):
    """Asks the user who they are, looks the customer up, and tells the user the country."""

    def policy(request: ScriptedRequest) -> ScriptedReply:
        if request.call_index == 0:
            return ScriptedReply("Sure. What is your customer id?")
        if request.call_index == 1:
            return ScriptedReply(tool_calls=(("get_customer", {"customer_id": "C-0007"}),))
        return ScriptedReply("IN")

    return policy


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    path = tmp_path / "mini.yaml"
    path.write_text(SUITE_YAML)
    loaded = load_suite(str(path))
    task = replace(loaded.tasks[0], user=UserScenario("You want to know the country of your account C-0007."))
    return replace(loaded, tasks=(task,))


def test_a_scripted_agent_and_a_scripted_user_complete_a_conversation(suite, tmp_path):
    config = RunConfig(suite=suite, model="scripted:agent", arms=("direct",), out_dir=tmp_path / "out", run_id="r1",
                       scaffold=GUIDED, user_model="scripted:talker")
    runner = Runner(config, provider=policy_provider("scripted:agent", talking_agent),
                    user_provider=policy_provider("scripted:talker", lambda task, arm: user_script_policy(USER_LINES)))
    summary = asyncio.run(runner.run())
    row = read_results([tmp_path / "out"]).iloc[0]
    assert bool(row.success) and row.answer == "IN" and row.error_type == ""
    # three agent turns (a message, a tool call, a message) and three user messages (the opening and two replies)
    assert (row.turns, row.llm_calls, row.user_turns, row.user_model) == (3, 3, 3, "scripted:talker")
    assert row.user_prompt_tokens > 0 and row.user_completion_tokens > 0 and row.user_time_s >= 0
    assert row.answers_refused == 0 and row.action_only_turns == 0  # guided's answer rules do not apply
    trajectory = read_trajectory(summary.path, row.sample_id)
    assert "The user said: Hi, in which country is my account?" in trajectory.prompt
    kinds = [(s.kind, s.observation) for s in trajectory.steps]
    assert kinds[0] == ("answer", "My customer id is C-0007.") and kinds[1][0] == "tool"
    assert kinds[2] == ("answer", "Great, thanks!")  # the stop token is the user model's protocol, not shown
    assert [c.role for c in trajectory.lm_calls].count("user") == 3
    second = [c for c in trajectory.lm_calls if c.role == "agent"][1]
    assert second.messages[-1] == {"role": "user", "content": "My customer id is C-0007."}


def test_a_run_ends_at_its_turn_limit_when_the_user_never_ends_it(suite, tmp_path):
    chatty = ("Hello?", "Are you there?")
    task = replace(suite.tasks[0], max_turns=2)
    config = RunConfig(suite=replace(suite, tasks=(task,)), model="scripted:agent", arms=("direct",),
                       out_dir=tmp_path / "out", run_id="r1", user_model="scripted:talker")
    runner = Runner(config, provider=policy_provider("scripted:agent", lambda t, a: lambda r: ScriptedReply("Hi.")),
                    user_provider=policy_provider("scripted:talker", lambda t, a: user_script_policy(chatty)))
    asyncio.run(runner.run())
    row = read_results([tmp_path / "out"]).iloc[0]
    assert row.error_type == "max_turns" and not bool(row.success) and row.user_turns == 3


def test_the_same_message_answered_the_same_way_again_is_a_repeat_the_scaffold_stops(suite, tmp_path):
    # guided stops after max_repeats (2) identical repeats: the opening, then the same reply to the same message
    config = RunConfig(suite=suite, model="scripted:agent", arms=("direct",), out_dir=tmp_path / "out", run_id="r1",
                       scaffold=GUIDED, user_model="scripted:talker")
    runner = Runner(config, provider=policy_provider("scripted:agent", lambda t, a: lambda r: ScriptedReply("Hi.")),
                    user_provider=policy_provider("scripted:talker", lambda t, a: user_script_policy(("Hello?",))))
    asyncio.run(runner.run())
    row = read_results([tmp_path / "out"]).iloc[0]
    assert (row.error_type, row.turns, row.repeated_actions) == ("repeated_action", 3, 2)


def test_the_user_simulator_keeps_its_side_of_the_conversation():
    lm = make_lm("user", ScriptedEngine(user_script_policy(("Hi.", "Done ###STOP###"))))
    user = UserSimulator(UserScenario("You want help."), lm)
    opening = asyncio.run(user.open())
    reply = asyncio.run(user.reply("How can I help?"))
    assert (opening, reply.text, reply.ended, user.turns) == ("Hi.", "Done", True, 2)
    assert user.conversation()[1:] == (("user", "Hi."), ("agent", "How can I help?"), ("user", "Done"))
    assert user_ended("ok ###TRANSFER###") and not user_ended("ok") and shown_text("bye ###STOP###") == "bye"


def test_the_answer_rules_reach_messages_to_the_user_only_under_refuse_messages_to_user():
    from harness.agents.loop import Action, _refusal, must_act
    from tests.agents.test_loop import loop_context

    message = Action("answer", "hello", {"text": "Hello, how can I help?"})
    talking = loop_context(user=object())  # any user: the rules only ask whether there is one
    assert not must_act([], talking) and _refusal(message, [], talking)[2] is None
    on = replace(talking, scaffold=replace(GUIDED, refuse_messages_to_user=True))
    assert must_act([], on) and _refusal(message, [], on)[2] == "refuse_answer_before_action"
    assert must_act([], loop_context())  # outside a conversation the rules apply as ever


def test_conversations_with_the_agents_own_model_as_user_give_its_engine_two_calls_per_run(suite, tmp_path):
    from harness.run.runner import engine_calls

    talk = RunConfig(suite=suite, model="local", arms=("direct",), out_dir=tmp_path, max_concurrency=3)
    assert engine_calls(talk) == 6  # agent and user of each of the 3 runs each keep their own context
    assert engine_calls(replace(talk, user_model="local:other.gguf")) == 3  # the user has an engine of its own
    no_users = replace(suite, tasks=tuple(replace(t, user=None) for t in suite.tasks))
    assert engine_calls(replace(talk, suite=no_users)) == 3
