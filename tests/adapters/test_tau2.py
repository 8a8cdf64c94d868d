"""The tau2 adapter on a look-alike checkout: tasks as conversations, a fresh database behind each run's server,
the reward from the end state and what the agent told the user."""

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from fastmcp import Client

import harness.adapters  # noqa: F401  registers the adapters
from harness.adapters.tau2 import Tau2, reference_code
from harness.adapters.tau2_checkout import db_state, load_domain
from harness.adapters.tau2_scoring import judged
from harness.agents.conversation import CONVERSATION_RULE
from harness.errors import UserError
from harness.models.scripted import ScriptedReply, ScriptedRequest, policy_provider, user_script_policy
from harness.models.tokens import count_tokens
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.registry import load_suite
from harness.tasks.scorers import ScoreContext, build_scorer
from tests.adapters.tau2_lookalike import DOMAIN, write_tau2_lookalike


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return write_tau2_lookalike(tmp_path / "tau2-bench")


def test_a_domain_loads_as_conversation_tasks_with_the_policy_and_the_users_scenario(checkout):
    suite = load_suite(f"tau2:{checkout}#{DOMAIN}")
    assert [t.id for t in suite.tasks] == ["kiosk/1", "kiosk/2"] and suite.spec == f"tau2:{checkout}#{DOMAIN}"
    first, second = suite.tasks
    assert first.prompt == "" and "<policy>\n# Kiosk policy\n\nOnly top up the card of the person" in \
        first.system_instructions  # the policy is the agent's system instructions, the same for the domain's tasks
    assert second.system_instructions == first.system_instructions
    assert "Why you are contacting customer service: You want 5 added to your card k-2." in first.user.instructions
    assert second.user.instructions == "Persona: A careful person.\nYou want to know the balance of card k-1."
    assert first.expected == {"reward_basis": ["DB", "COMMUNICATE"], "communicate_info": ["6.5"], "nl_assertions": []}
    assert load_suite(suite.spec).tasks == suite.tasks  # the spec loads it again


def test_bad_specs_are_one_line_errors(checkout, tmp_path):
    with pytest.raises(UserError, match="not a tau2-bench checkout"):
        load_suite(f"tau2:{tmp_path}")
    with pytest.raises(UserError, match="no domain 'nowhere'"):
        load_suite(f"tau2:{checkout}#nowhere")
    with pytest.raises(UserError, match="no split 'dev'"):
        load_suite(f"tau2:{checkout}#{DOMAIN}/dev")
    dual = write_tau2_lookalike(tmp_path / "dual")
    (dual / "src" / "tau2" / "domains" / DOMAIN / "user_tools.py").write_text("")  # the user has tools too
    with pytest.raises(UserError, match="dual control"):
        load_suite(f"tau2:{dual}#{DOMAIN}")


def test_a_second_domain_loads_and_runs_beside_the_first_and_the_bare_path_takes_the_leaderboards(checkout, tmp_path):
    write_tau2_lookalike(checkout, "airline")  # the kiosk domain again, named as a leaderboard domain
    airline = load_suite(f"tau2:{checkout}#airline")
    assert [t.id for t in airline.tasks] == ["airline/1", "airline/2"]
    assert airline.tasks[0].servers[0].name == "airline" and "# Airline policy" in airline.tasks[0].system_instructions
    assert [t.id for t in load_suite(f"tau2:{checkout}").tasks] == ["airline/1", "airline/2"]  # retail is absent
    kiosk = load_suite(f"tau2:{checkout}#{DOMAIN}").tasks[0]
    assert kiosk.system_instructions != airline.tasks[0].system_instructions
    config = RunConfig(suite=airline, model="scripted:agent", arms=("direct",), task_ids=("airline/1",),
                       out_dir=tmp_path / "out", run_id="r1", user_model="scripted:u")
    lines = ("Please add 5 to my card.", "It is k-2.", "Thanks! ###STOP###")
    runner = Runner(config, provider=policy_provider("scripted:agent", agent_policy),
                    user_provider=policy_provider("scripted:u", lambda t, a: user_script_policy(lines)))
    asyncio.run(runner.run())
    row = read_results([tmp_path / "out"]).iloc[0]
    assert bool(row.success) and row.score_reason == "db: matches the expected end state; communicate: 1/1 told"


def test_a_domain_without_its_database_is_a_one_line_error_naming_the_file(checkout):
    write_tau2_lookalike(checkout, "airline")
    (checkout / "data" / "tau2" / "domains" / "airline" / "db.json").unlink()  # as in a snapshot without airline's data
    for spec in (f"tau2:{checkout}#airline", f"tau2:{checkout}"):  # the bare path does not leave it out unsaid
        with pytest.raises(UserError) as info:
            load_suite(spec)
        assert "\n" not in str(info.value) and "lacks data/tau2/domains/airline/db.json" in str(info.value)
    assert [t.id for t in load_suite(f"tau2:{checkout}#{DOMAIN}").tasks] == ["kiosk/1", "kiosk/2"]


def test_each_server_has_the_checkouts_tools_over_a_fresh_database(checkout):
    async def use() -> tuple[list, dict, dict]:
        first, second = Tau2().build_server(checkout, DOMAIN), Tau2().build_server(checkout, DOMAIN)
        async with Client(first) as client:
            tools = await client.list_tools()
            result = await client.call_tool("top_up", {"card_id": "k-2", "amounts": [5.0, 1.0]})
        import fixtures_servers
        return tools, json.loads(result.content[0].text), (fixtures_servers.end_state(first),
                                                             fixtures_servers.end_state(second))

    tools, card, (changed, fresh) = asyncio.run(use())
    by_name = {t.name: t for t in tools}
    assert sorted(by_name) == ["get_card", "top_up"]
    assert by_name["top_up"].inputSchema["properties"]["amounts"] == {"type": "array", "items": {"type": "number"}}
    assert "Add each amount to a card's balance." in by_name["top_up"].description
    assert card == {"owner": "Bo", "balance": 7.5}
    assert changed["db"]["cards"]["k-2"]["balance"] == 7.5 and fresh["db"]["cards"]["k-2"]["balance"] == 1.5


def _context(checkout: Path, task_index: int, writes: list[tuple[str, list[float]]], messages: list[str]) -> tuple:
    suite = load_suite(f"tau2:{checkout}#{DOMAIN}")
    task = suite.tasks[task_index]
    domain = load_domain(checkout.resolve(), DOMAIN)
    db = domain.fresh_db()
    tools = domain.toolkit_over(db)
    for card_id, amounts in writes:
        tools.top_up(card_id, amounts)
    conversation = tuple(("agent", m) for m in messages)
    return build_scorer(task.scorer), ScoreContext("", task.expected, {DOMAIN: {"db": db_state(db)}},
                                                   conversation=conversation)


def test_the_scorer_passes_the_expected_actions_and_fails_a_wrong_write(checkout):
    scorer, right = _context(checkout, 0, [("k-2", [5.0])], ["Done: your balance is 6.5 now."])
    score = scorer.evaluate(right)
    assert score.passed and score.reason == "db: matches the expected end state; communicate: 1/1 told"
    scorer, wrong = _context(checkout, 0, [("k-2", [4.0])], ["Done: your balance is 6.5 now."])
    assert not scorer.evaluate(wrong).passed and "db: differs" in scorer.evaluate(wrong).reason
    scorer, other_card = _context(checkout, 0, [("k-3", [5.0])], ["Your balance is 6.5."])
    assert not scorer.evaluate(other_card).passed
    scorer, untold = _context(checkout, 0, [("k-2", [5.0])], ["Done."])
    assert not scorer.evaluate(untold).passed and "communicate: 0/1 told (missing '6.5')" in scorer.evaluate(untold).reason
    (label, state), = scorer.wrong_states(right)
    assert not scorer.evaluate(replace(right, end_state=state)).passed


def test_assertions_without_a_judge_are_reported_as_not_scored(checkout):
    scorer, untouched = _context(checkout, 1, [], ["It holds 10."])
    score = scorer.evaluate(untouched)
    assert score.passed and score.reason == ("db: matches the expected end state; nl_assertions: 1 not scored "
                                             "(no judge model)")
    assert not scorer.judges_answer(untouched.expected)  # nothing to tell: validate tries wrong states instead
    scorer, written = _context(checkout, 1, [("k-1", [1.0])], ["It holds 10."])
    assert not scorer.evaluate(written).passed  # a read-only task fails on any write


def test_a_reference_calls_the_expected_actions_even_after_one_fails():
    code = reference_code([{"name": "find", "arguments": {"email": "x@y"}}, {"name": "top_up", "arguments": {}}],
                          ["6.5", "k-2"])
    assert code.splitlines() == ["try:", "    find(**{'email': 'x@y'})", "except Exception:", "    pass",
                                 "try:", "    top_up(**{})", "except Exception:", "    pass", "print('6.5 k-2')"]


def agent_policy(task, arm):
    """Asks for the card, tops it up, and tells the user the new balance."""

    def policy(request: ScriptedRequest) -> ScriptedReply:
        if request.call_index == 0:
            return ScriptedReply("Which card should I top up?")
        if request.call_index == 1:
            return ScriptedReply(tool_calls=(("top_up", {"card_id": "k-2", "amounts": [5.0]}),))
        return ScriptedReply("Done. Your balance is now 6.5.")

    return policy


def test_a_scripted_agent_and_user_complete_a_tau2_conversation(checkout, tmp_path):
    suite = load_suite(f"tau2:{checkout}#{DOMAIN}")
    lines = ("Please add 5 to my card.", "It is k-2.", "Thanks! ###STOP###")
    config = RunConfig(suite=suite, model="scripted:agent", arms=("direct",), epochs=2, task_ids=("kiosk/1",),
                       out_dir=tmp_path / "out", run_id="r1", user_model="scripted:kiosk-user")
    runner = Runner(config, provider=policy_provider("scripted:agent", agent_policy),
                    user_provider=policy_provider("scripted:kiosk-user", lambda t, a: user_script_policy(lines)))
    summary = asyncio.run(runner.run())
    frame = read_results([tmp_path / "out"])
    assert frame.success.all() and (frame.user_turns == 3).all() and (frame.turns == 3).all()
    assert frame.score_reason.iloc[0] == "db: matches the expected end state; communicate: 1/1 told"
    trajectory = read_trajectory(summary.path, frame.sample_id.iloc[0])
    assert [s.kind for s in trajectory.steps] == ["answer", "tool", "answer"]
    assert trajectory.steps[0].observation == "It is k-2."
    first_call = next(c for c in trajectory.lm_calls if c.role == "agent")
    system, task_text = first_call.messages[0]["content"], first_call.messages[1]["content"]
    assert system.endswith(suite.tasks[0].system_instructions) and "Only top up the card" not in task_text
    assert task_text.startswith(CONVERSATION_RULE) and task_text.endswith("The user said: Please add 5 to my card.")


def test_a_judge_model_scores_the_assertions_from_the_conversation():
    seen = []

    def judge(system: str, user: str) -> str:
        seen.append(user)
        return 'Verdicts: [{"met": true, "why": "said so"}, {"met": false, "why": "never said"}]'

    ok, why = judged(judge, (("agent", "It holds 10."), ("user", "Thanks")), ["Says the balance.", "Says goodbye."])
    assert (ok, why) == (False, "nl_assertions: 1/2 met (not: 'Says goodbye.')")
    assert "agent: It holds 10.\nuser: Thanks" in seen[0] and "2. Says goodbye." in seen[0]
    assert judged(lambda s, u: "no idea", (), ["x"])[0] is False


def card_agent(task, arm):
    """Looks card k-1 up and tells the user its balance."""
    def policy(request: ScriptedRequest) -> ScriptedReply:
        if request.call_index == 0:
            return ScriptedReply(tool_calls=(("get_card", {"card_id": "k-1"}),))
        return ScriptedReply("Card k-1 holds 10.")
    return policy


def run_judged(checkout: Path, out: Path, task_id: str, judge_model: str):
    """One run of a task by `card_agent`, with the scripted judge named (or none): its row and trajectory file."""
    config = RunConfig(suite=load_suite(f"tau2:{checkout}#{DOMAIN}"), model="scripted:agent", arms=("direct",),
                       task_ids=(task_id,), out_dir=out, run_id="r1", judge_model=judge_model)
    judge = policy_provider("scripted:judge", lambda t, a: lambda r: '[{"met": true}]') if judge_model else None
    runner = Runner(config, provider=policy_provider("scripted:agent", card_agent), judge_provider=judge)
    summary = asyncio.run(runner.run())
    return read_results([out]).iloc[0], summary.path


def test_a_run_with_a_judge_model_scores_the_assertions_and_records_its_calls_apart(checkout, tmp_path):
    row, path = run_judged(checkout, tmp_path / "out", "kiosk/2", "scripted:judge")
    assert bool(row.success) and row.score_reason == "db: matches the expected end state; nl_assertions: 1/1 met"
    assert row.llm_calls == 2  # the agent's; the user's (scripted:user) and the judge's are recorded apart
    calls = read_trajectory(path, row.sample_id).lm_calls
    roles = [c.role for c in calls]
    assert roles.count("judge") == 1 and roles.count("user") == 2
    judge_call = calls[roles.index("judge")]
    assert (row.judge_model, row.judge_calls) == ("scripted:judge", 1)  # its tokens are in its own columns
    assert row.judge_prompt_tokens == count_tokens("\n".join(m["content"] for m in judge_call.messages)) > 0
    assert row.judge_completion_tokens == count_tokens(judge_call.output) and row.judge_time_s >= 0
    unjudged, _ = run_judged(checkout, tmp_path / "plain", "kiosk/2", "")
    assert unjudged.judge_model == "" and pd.isna(unjudged.judge_calls)
    for column in ("prompt_tokens", "completion_tokens", "total_tokens", "llm_calls"):  # the comparison: the agent's
        assert row[column] == unjudged[column], column


def test_the_judge_columns_are_null_where_no_judge_was_called(checkout, tmp_path):
    row, _ = run_judged(checkout, tmp_path / "out", "kiosk/1", "scripted:judge")  # task 1 has no assertion to judge
    assert row.judge_model == "" and pd.isna(row.judge_calls) and pd.isna(row.judge_prompt_tokens)


def test_the_tau2_preset_is_plain_with_the_orchestrators_rules_and_a_hash_of_its_own():
    from dataclasses import replace as changed

    from harness.adapters.tau2 import PROTOCOL, Tau2
    from harness.agents.scaffold import PLAIN, load_scaffold

    preset = load_scaffold("tau2")
    assert Tau2.protocol is PROTOCOL and preset.name == "tau2" and preset.hash not in (PLAIN.hash, "")
    assert (preset.turn_limit, preset.parallel_tool_calls) == (100, True)  # 200 steps: 100 agent messages
    assert preset.observation_limit_chars >= 100_000  # results shown whole
    assert changed(preset, name="plain", turn_limit=0, observation_limit_chars=PLAIN.observation_limit_chars) == PLAIN


def test_a_conversation_that_did_not_end_with_the_user_scores_0_whatever_the_database_holds(checkout):
    scorer, right = _context(checkout, 0, [("k-2", [5.0])], ["Done: your balance is 6.5 now."])
    assert scorer.evaluate(right).passed
    ended = scorer.evaluate(replace(right, error_type="max_turns"))
    assert not ended.passed and ended.value == 0.0 and "ended with max_turns" in ended.reason


def test_under_the_tau2_preset_a_conversation_gets_100_agent_turns(checkout, tmp_path):
    from harness.agents.scaffold import load_scaffold

    chatty = ("Hmm.",) * 200  # a user who never ends the conversation
    suite = load_suite(f"tau2:{checkout}#{DOMAIN}")
    config = RunConfig(suite=suite, model="scripted:agent", arms=("direct",), task_ids=("kiosk/1",),
                       out_dir=tmp_path / "out", run_id="r1", scaffold=load_scaffold("tau2"), user_model="scripted:u")
    runner = Runner(config, provider=policy_provider("scripted:agent", lambda t, a: lambda r: ScriptedReply("Yes?")),
                    user_provider=policy_provider("scripted:u", lambda t, a: user_script_policy(chatty)))
    asyncio.run(runner.run())
    row = read_results([tmp_path / "out"]).iloc[0]
    assert (row.turns, row.error_type, row.scaffold) == (100, "max_turns", "tau2") and not row.success


@pytest.mark.parametrize("basis, reads", [(["DB", "COMMUNICATE"], {"state", "answer"}), (["DB"], {"state"}),
                                          (["NL_ASSERTION"], {"answer"}), (["ACTION"], set())])
def test_the_reward_reads_the_database_and_what_the_agent_said_as_its_basis_counts_them(checkout, basis, reads):
    scorer = build_scorer(load_suite(f"tau2:{checkout}#kiosk").tasks[0].scorer)
    assert scorer.reads({"reward_basis": basis}) == reads
