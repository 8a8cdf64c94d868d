"""The runner on the direct arm (no sandbox needed): rows, failures as rows, timeouts, resume, a suite whose
server never starts stopped before it writes rows; a benchmark read from its checkout (code mode on it needs the
sandbox)."""

import asyncio
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

import harness.adapters  # noqa: F401  registers the published benchmarks
from harness.agents.arms import get_arm
from harness.errors import UserError
from harness.models.scripted import ScriptedRequest, garbage_policy, policy_provider
from harness.run import manifest as manifest_module
from harness.run.manifest import resume_config, write_manifest
from harness.run.records import read_results, read_trajectory
from harness.run.reference import ReferenceTrace, reference_policy
from harness.run.runner import RunConfig, Runner, prepare
from harness.tasks.registry import load_suite as load_any_suite
from harness.tasks.suite import load_suite
from tests.adapters.lookalike import solving_policy, write_lookalike
from tests.mcp import stub_servers
from tests.mcp.latency import count_waits

SUITE_YAML = """
suite: mini
servers: [crm]
tasks:
  - id: country
    category: lookup
    prompt: "In which country is customer C-0007? Two-letter code only."
    expected: IN
    scorer: exact
    reference: print(get_customer(customer_id="C-0007")["country"])
  - id: wrong
    category: lookup
    prompt: "In which country is customer C-0001?"
    expected: ZZ
    scorer: exact
    reference: print(get_customer(customer_id="C-0001")["country"])
"""


@pytest.fixture
def suite(tmp_path: Path):
    path = tmp_path / "mini.yaml"
    path.write_text(SUITE_YAML)
    return load_suite(str(path))


def replaying(task, arm):
    trace = ReferenceTrace("IN", "IN", (("get_customer", {"customer_id": "C-0007"}),), {})
    return reference_policy(trace, task, arm)


def run(config: RunConfig, provider) -> list:
    summary = asyncio.run(Runner(config, provider=provider).run())
    return list(summary.records)


def test_direct_rows_carry_answer_tokens_tools_turns_and_timing(suite, tmp_path):
    config = RunConfig(suite=suite, model="scripted:test", arms=("direct",), out_dir=tmp_path / "out", run_id="r1")
    run(config, policy_provider("scripted:test", replaying))
    frame = read_results([tmp_path / "out"]).set_index("task_id")
    row = frame.loc["country"]
    assert bool(row.success) and row.answer == "IN" and row.error_type == ""
    assert row.tool_calls == 1 and row.turns == 2 and row.llm_calls == 2 and row.repeated_actions == 0
    assert row.prompt_tokens > 0 and row.completion_tokens > 0
    assert row.total_tokens == row.prompt_tokens + row.completion_tokens
    assert row.token_source == "tiktoken:cl100k_base"
    assert row.context_tool_definition_tokens > 0 and row.context_tool_result_tokens > 0
    assert row.latency_s > 0 and row.lm_time_s > 0 and row.tool_time_s > 0
    assert not bool(frame.loc["wrong"].success) and "differs" in frame.loc["wrong"].score_reason
    trajectory = read_trajectory(tmp_path / "out" / "mini" / "r1.parquet", row.sample_id)
    assert trajectory.tool_calls[0].tool == "get_customer" and trajectory.tool_calls[0].server == "crm"
    assert trajectory.tool_calls[0].step == 0 and not trajectory.tool_calls[0].in_code
    assert len(trajectory.lm_calls) == 2 and trajectory.steps[-1].calls[0].tool == "final_answer"
    assert trajectory.lm_calls[0].tool_calls == ({"name": "get_customer", "arguments": {"customer_id": "C-0007"}},)


def test_rows_count_the_turns_that_ran_several_calls_where_the_arm_runs_them(suite, tmp_path):
    def batched(task, arm):
        trace = ReferenceTrace("IN", "IN", (("get_customer", {"customer_id": "C-0007"}),
                                            ("get_customer", {"customer_id": "C-0001"})), {}, call_batches=(1, 1))
        return reference_policy(trace, task, arm, parallel=get_arm(arm).parallel_calls)

    config = RunConfig(suite=suite, model="scripted:test", arms=("direct", "react"), out_dir=tmp_path / "out",
                       run_id="r1", task_ids=("country",))
    run(config, policy_provider("scripted:test", batched))
    frame = read_results([tmp_path / "out"]).set_index("arm")
    direct, react = frame.loc["direct"], frame.loc["react"]
    assert bool(direct.parallel_tool_calls) and direct.parallel_turns == 1
    assert direct.turns == 2 and direct.tool_calls == 2 and bool(direct.success)
    assert react.turns == 3 and react.tool_calls == 2  # one call per turn: the rule does not apply
    assert pd.isna(react.parallel_tool_calls) and pd.isna(react.parallel_turns)


def test_unparseable_output_is_a_recorded_row(suite, tmp_path):
    config = RunConfig(suite=suite, model="scripted:garbage", arms=("react",), out_dir=tmp_path, run_id="g")
    records = run(config, policy_provider("scripted:garbage", lambda task, arm: garbage_policy))
    assert len(records) == 2
    assert all(r.error_type == "parse_error" and not r.success for r in records)


def test_a_model_whose_every_call_fails_for_good_stops_the_suite_with_one_error(suite, tmp_path):
    class AuthenticationError(Exception):
        pass

    def refusing(task, arm):
        def policy(request):
            raise AuthenticationError("invalid api key")
        return policy

    config = RunConfig(suite=suite, model="scripted:test", arms=("direct", "react"), out_dir=tmp_path, run_id="a")
    with pytest.raises(UserError, match="every LM call fails .*invalid api key.*check the model string"):
        run(config, policy_provider("scripted:test", refusing))
    assert not (tmp_path / "mini" / "a.parquet").exists() or len(read_results([tmp_path])) == 0


def test_a_run_past_its_timeout_is_recorded_and_the_rest_goes_on(suite, tmp_path):
    def slow_then_replay(task, arm):
        inner = replaying(task, arm)

        def policy(request: ScriptedRequest):
            if task.id == "wrong":
                import time
                time.sleep(1.0)
            return inner(request)
        return policy

    config = RunConfig(suite=suite, model="scripted:test", arms=("direct",), out_dir=tmp_path, run_id="t",
                       timeout_s=0.5)
    records = {r.task_id: r for r in run(config, policy_provider("scripted:test", slow_then_replay))}
    assert records["wrong"].error_type == "timeout"
    assert records["country"].success


def test_resume_runs_only_what_is_missing(suite, tmp_path):
    provider = policy_provider("scripted:test", replaying)
    first = RunConfig(suite=suite, model="scripted:test", arms=("direct",), out_dir=tmp_path, run_id="res",
                      task_ids=("country",))
    run(first, provider)
    calls = []

    def counting(task, arm):
        calls.append(task.id)
        return replaying(task, arm)

    resumed = RunConfig(suite=suite, model="scripted:test", arms=("direct",), out_dir=tmp_path, run_id="res")
    records = run(resumed, policy_provider("scripted:test", counting))
    assert calls == ["wrong"]
    assert sorted(r.task_id for r in records) == ["country", "wrong"]


def test_rows_record_the_task_content_hash(suite, tmp_path):
    config = RunConfig(suite=suite, model="scripted:test", arms=("direct",), out_dir=tmp_path, run_id="h")
    records = {r.task_id: r for r in run(config, policy_provider("scripted:test", replaying))}
    assert {tid: r.task_hash for tid, r in records.items()} == {t.id: t.content_hash for t in suite.tasks}


def test_resume_refuses_a_task_edited_since_the_run_recorded_it(suite, tmp_path):
    provider = policy_provider("scripted:test", replaying)
    run(RunConfig(suite=suite, model="scripted:test", arms=("direct",), out_dir=tmp_path / "out", run_id="res",
                  task_ids=("country",)), provider)
    edited = tmp_path / "mini.yaml"
    edited.write_text(SUITE_YAML.replace("Two-letter code only.", "Answer with the ISO code."))
    resumed = RunConfig(suite=load_suite(str(edited)), model="scripted:test", arms=("direct",),
                        out_dir=tmp_path / "out", run_id="res")
    with pytest.raises(UserError, match=r"run res: task\(s\) country changed in .*mini.yaml since the run recorded"):
        run(resumed, provider)
    assert len(read_results([tmp_path / "out"])) == 1  # the recorded row is kept


def external_suite(tmp_path: Path, monkeypatch, **servers) -> RunConfig:
    """The mini suite on an external server 'mycrm' (entry given), as a direct-arm run 'ext' of both tasks."""
    config = stub_servers.write_config(tmp_path / "mcp_servers.json", **servers)
    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(config))
    path = tmp_path / "ext.yaml"
    path.write_text(SUITE_YAML.replace("suite: mini\nservers: [crm]", "suite: ext\nservers: [mycrm]"))
    return RunConfig(suite=load_suite(str(path)), model="scripted:test", arms=("direct",), out_dir=tmp_path / "out",
                     run_id="ext")


@pytest.mark.integration
@pytest.mark.parametrize("broken, cause", [
    ("missing", "No such file or directory: 'no-such-mcp-server-command'"),
    ("quitting", "the process exited before answering the MCP handshake"),
    ("sleeping", "no answer to the MCP handshake and tool listing within 2 s"),
])
def test_a_server_that_never_starts_stops_the_suite_with_no_rows_and_resume_retries_it(tmp_path, monkeypatch,
                                                                                      broken, cause):
    entry = stub_servers.sleeping(tmp_path) if broken == "sleeping" else getattr(stub_servers, broken)()
    config = external_suite(tmp_path, monkeypatch, mycrm=entry)
    with pytest.raises(UserError) as info:
        run(replace(config, server_start_timeout_s=2.0), policy_provider("scripted:test", replaying))
    message = str(info.value)
    assert message.startswith("server 'mycrm' did not start: ") and cause in message and "\n" not in message
    assert "stderr: " + str(tmp_path / "out" / "ext" / "ext.server-logs") in message
    assert "harness run --resume ext" in message
    assert not (tmp_path / "out" / "ext" / "ext.parquet").exists()
    stub_servers.write_config(tmp_path / "mcp_servers.json", mycrm=stub_servers.crm(tmp_path))  # the fix
    records = {r.task_id: r for r in run(config, policy_provider("scripted:test", replaying))}
    assert records["country"].success and records["wrong"].error_type == ""


@pytest.mark.integration
def test_a_server_that_worked_and_then_fails_to_start_gives_rows_for_the_rest(tmp_path, monkeypatch):
    config = external_suite(tmp_path, monkeypatch, mycrm=stub_servers.crm(tmp_path, starts=1))
    records = run(replace(config, epochs=2), policy_provider("scripted:test", replaying))
    assert [(r.task_id, r.epoch, r.error_type) for r in records] == [
        ("country", 0, ""), ("wrong", 0, "server_error"), ("country", 1, "server_error"), ("wrong", 1, "server_error")]
    assert records[0].success and "licence expired after 1 start(s)" in records[1].error_message


# ---- a benchmark read from its checkout (the look-alike the tests write) ----

SOME_TASKS = ("unit_converter/largest_of_three", "library_shelf/second_title")


@pytest.fixture
def benchmark(tmp_path: Path):
    return load_any_suite(f"m3tooleval:{write_lookalike(tmp_path / 'code-act')}")


def run_benchmark(benchmark, tmp_path, arms) -> list:
    config = RunConfig(suite=benchmark, model="scripted:test", arms=arms, out_dir=tmp_path / "out", run_id="b",
                       task_ids=SOME_TASKS)
    return run(config, policy_provider("scripted:test", solving_policy))


def test_benchmark_rows_name_the_benchmark_the_family_and_the_task_with_its_hash(benchmark, tmp_path):
    records = run_benchmark(benchmark, tmp_path, ("direct", "react"))
    hashes = {t.id: t.content_hash for t in benchmark.tasks}
    assert sorted((r.task_id, r.arm) for r in records if r.success) == sorted(
        (task_id, arm) for task_id in SOME_TASKS for arm in ("direct", "react"))
    assert {(r.suite, r.category, r.task_hash) for r in records} == {
        ("m3tooleval", task_id.split("/")[0], hashes[task_id]) for task_id in SOME_TASKS}
    assert {r.tool_calls for r in records if r.task_id == "library_shelf/second_title"} == {2}


@pytest.mark.sandbox
def test_benchmark_tools_are_called_from_code_mode_with_fresh_state_per_run(benchmark, tmp_path):
    records = run_benchmark(benchmark, tmp_path, ("codemode",))
    assert [(r.task_id, r.answer, r.success) for r in sorted(records, key=lambda r: r.task_id)] == [
        ("library_shelf/second_title", "Dune", True), ("unit_converter/largest_of_three", "11", True)]


def test_a_benchmark_run_is_resumed_from_its_adapter_spec(benchmark, tmp_path):
    config = RunConfig(suite=benchmark, model="scripted:test", arms=("direct",), out_dir=tmp_path, run_id="m")
    write_manifest(config, "m")
    resumed = resume_config("m", tmp_path)
    assert resumed.suite.spec == benchmark.spec and resumed.suite.tasks == benchmark.tasks


def test_scripted_reference_refuses_tasks_without_a_reference_before_any_run(benchmark):
    config = RunConfig(suite=benchmark, model="scripted:reference", arms=("direct",))
    with pytest.raises(UserError, match=r"^scripted:reference cannot replay task 'unit_converter/boiling_point' "
                                        r"and 3 other task\(s\): no reference solution"):
        prepare(config)


def test_rows_and_trajectories_name_the_scaffold_and_the_rules_that_fired(suite, tmp_path):
    from harness.agents.scaffold import GUIDED, PLAIN

    for scaffold in (PLAIN, GUIDED):
        config = RunConfig(suite=suite, model="scripted:test", arms=("direct",), out_dir=tmp_path / scaffold.name,
                           run_id="r", task_ids=("country",), scaffold=scaffold)
        run(config, policy_provider("scripted:test", replaying))
    plain, guided = (read_results([tmp_path / name]).iloc[0] for name in ("plain", "guided"))
    assert (plain.scaffold, plain.scaffold_hash, guided.scaffold, guided.scaffold_hash) == \
        ("plain", PLAIN.hash, "guided", GUIDED.hash)
    assert plain.action_only_turns == 0 and guided.action_only_turns == 1  # the first turn must act
    steps = [read_trajectory(tmp_path / name / "mini" / "r.parquet", row.sample_id).steps
             for name, row in (("plain", plain), ("guided", guided))]
    assert [step.rules for step in steps[0]] == [(), ()]
    assert [step.rules for step in steps[1]] == [("answer_or_act_grammar",), ()]


def test_a_scripted_model_runs_under_plain_unless_told():
    config = RunConfig(suite=load_suite("smoke"), model="scripted:reference")
    assert config.rules.name == "plain" and RunConfig(suite=config.suite, model="local").rules.name == "guided"


def test_a_resumed_run_keeps_the_scaffold_it_started_with(suite, tmp_path):
    from harness.agents.scaffold import GUIDED

    write_manifest(RunConfig(suite=suite, model="scripted:test", out_dir=tmp_path, scaffold=GUIDED), "m1")
    assert resume_config("m1", tmp_path).rules == GUIDED


def test_a_resumed_catalogue_run_has_the_sizes_it_was_started_with(tmp_path):
    write_manifest(RunConfig(suite=load_suite("catalogue", (16, 100)), model="scripted:test", out_dir=tmp_path), "c")
    resumed = resume_config("c", tmp_path).suite
    assert resumed.catalogue_sizes == (16, 100)
    assert {t.catalogue_size for t in resumed.tasks} == {16, 100}


def test_an_installed_package_records_no_git_commit(monkeypatch):
    monkeypatch.setattr(manifest_module, "checkout_root", lambda: None)
    assert manifest_module.git_sha.__wrapped__() == ""


@pytest.mark.parametrize("option, value, before", [
    ("max_tool_result_mb", 7.0, None),  # runs before the limit existed had none
    ("tool_latency_s", 0.2, 0.0),  # runs before the option existed added none
])
def test_a_resumed_run_keeps_its_option_and_an_older_manifest_gets_what_its_runs_had(suite, tmp_path, option, value,
                                                                                    before):
    import json

    write_manifest(RunConfig(suite=suite, model="scripted:test", out_dir=tmp_path, **{option: value}), "m2")
    assert getattr(resume_config("m2", tmp_path), option) == value
    manifest = tmp_path / "mini" / "m2.run.json"
    data = json.loads(manifest.read_text())
    data.update(data.pop("limits"))  # as a manifest written before the limits were recorded whole kept them flat,
    del data[option]  # and before the option existed
    manifest.write_text(json.dumps(data))
    assert getattr(resume_config("m2", tmp_path), option) == before


@pytest.mark.parametrize("arm", ["direct", "react", "codemode-fastmcp",  # its meta-tools are not delayed, the calls inside
                                 pytest.param("codemode", marks=pytest.mark.sandbox),
                                 pytest.param("codemode-discover", marks=pytest.mark.sandbox)])
def test_every_arm_waits_the_tool_latency_once_per_tool_call_and_its_rows_record_it(suite, tmp_path, monkeypatch, arm):
    waits = count_waits(monkeypatch, 0.05)
    config = RunConfig(suite=suite, model="scripted:test", arms=(arm,), task_ids=("country",), out_dir=tmp_path,
                       run_id="lat", tool_latency_s=0.05)
    [record] = run(config, policy_provider("scripted:test", replaying))
    assert record.success and record.tool_calls == 1 and len(waits) == 1
    assert record.tool_latency_s == 0.05 and record.tool_time_s >= 0.05
    assert read_results([tmp_path]).iloc[0].tool_latency_s == 0.05


@pytest.mark.sandbox
def test_the_reference_trace_a_replay_is_built_from_waits_no_tool_latency(tmp_path, monkeypatch):
    waits = count_waits(monkeypatch, 0.05)
    config = RunConfig(suite=load_suite("smoke"), model="scripted:reference", arms=("direct",),
                       task_ids=("customer-country",), out_dir=tmp_path, tool_latency_s=0.05)
    [record] = asyncio.run(Runner(config).run()).records
    assert record.success and record.tool_calls >= 1 and len(waits) == record.tool_calls  # the run's calls only


@pytest.mark.parametrize("latency, tool_timeout, fragment", [
    (-0.1, 60.0, "--tool-latency must be at least 0 seconds"),
    (5.0, 5.0, "--tool-latency 5 s is not below --tool-timeout 5 s"),
])
def test_a_tool_latency_below_zero_or_not_below_the_tool_timeout_is_refused_before_any_run(suite, latency,
                                                                                          tool_timeout, fragment):
    config = RunConfig(suite=suite, model="scripted:garbage", tool_latency_s=latency, tool_timeout_s=tool_timeout)
    with pytest.raises(UserError, match=fragment):
        prepare(config)

