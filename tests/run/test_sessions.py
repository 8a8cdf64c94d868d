"""Sessions through the runner on scripted:reference: a session's tasks run in its order per arm, rows record what
was saved and reused, the scaffold switches the parts off, a resumed run goes on from the state on disk, and
`harness validate` traces a session's references in order."""

from dataclasses import replace

import pytest

from harness.agents.scaffold import PLAIN
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner
from harness.run.validate import validate_suite
from harness.tasks.suite import load_suite

pytestmark = pytest.mark.sandbox

NET_REVENUE = ("net-revenue-goran-tanaka", "net-revenue-emeka-ito", "net-revenue-mateo-berg", "net-revenue-uma-quispe")


def config(tmp_path, run_id="s", scaffold=PLAIN, arms=("codemode", "direct"), tasks=NET_REVENUE) -> RunConfig:
    return RunConfig(suite=load_suite("sessions"), model="scripted:reference", arms=arms, task_ids=tasks,
                     out_dir=tmp_path, run_id=run_id, scaffold=scaffold, max_concurrency=2)


def rows(summary):
    return read_results([summary.path]).sort_values(["arm", "session_position"]).set_index(["arm", "task_id"])


async def test_a_skill_saved_by_the_first_task_is_reused_by_the_later_ones_in_code_mode(sandbox_pool, tmp_path):
    arms = ("codemode", "codemode-discover", "direct")
    frame = rows(await Runner(config(tmp_path, arms=arms), pool=sandbox_pool).run())
    assert frame.success.all()
    for arm in arms[:2]:
        code = frame.loc[arm]
        assert list(code.session_position) == [0, 1, 2, 3] and set(code.session) == {"net-revenue"}
        assert list(code.skills_available) == ["", "net_revenue", "net_revenue", "net_revenue"]
        assert list(code.skills_saved) == ["net_revenue", "", "", ""]
        assert list(code.skills_used) == ["", "net_revenue", "net_revenue", "net_revenue"]
    direct = frame.loc["direct"]  # no sandbox: the session only orders the tasks
    assert list(direct.session_position) == [0, 1, 2, 3]
    assert direct[["skills_available", "skills_saved", "skills_used", "workspace_files"]].isna().all().all()


async def test_the_scaffold_switches_skills_and_workspace_off(sandbox_pool, tmp_path):
    off = replace(PLAIN, name="off", skills=False, workspace=False)
    frame = rows(await Runner(config(tmp_path, scaffold=off, arms=("codemode",)), pool=sandbox_pool).run())
    assert frame.success.all()  # the references define the function again when there is no skill
    assert frame[["skills_available", "skills_saved", "skills_used", "workspace_files"]].isna().all().all()
    assert frame.session.notna().all()


async def test_workspace_files_reach_the_later_tasks_of_their_session(sandbox_pool, tmp_path):
    tasks = ("de-active-list", "de-active-pro")
    frame = rows(await Runner(config(tmp_path, arms=("codemode",), tasks=tasks), pool=sandbox_pool).run())
    assert frame.success.all() and list(frame.workspace_files) == [1, 1]
    assert frame.loc[("codemode", "de-active-pro")].tool_calls == 9  # read the ids from the file, no list call


class Killed(Exception):
    """The run dies here (as on Ctrl-C or a crash: the runner keeps what finished)."""


async def test_a_resumed_run_goes_on_in_order_from_the_state_the_killed_one_left(sandbox_pool, tmp_path, monkeypatch):
    run_sample = Runner.run_sample
    order: list[tuple[str, int]] = []

    async def killed_at_position_two(self, sample, run_id, store, *rest):
        if sample.place is not None and sample.place.position == 2:
            raise Killed
        return await run_sample(self, sample, run_id, store, *rest)

    monkeypatch.setattr(Runner, "run_sample", killed_at_position_two)
    with pytest.raises(Killed):
        await Runner(config(tmp_path, arms=("codemode",)), pool=sandbox_pool).run()

    async def recording(self, sample, run_id, store, *rest):
        order.append((sample.task.id, sample.place.position))
        return await run_sample(self, sample, run_id, store, *rest)

    monkeypatch.setattr(Runner, "run_sample", recording)
    frame = rows(await Runner(config(tmp_path, arms=("codemode",)), pool=sandbox_pool).run())
    assert order == [("net-revenue-mateo-berg", 2), ("net-revenue-uma-quispe", 3)]
    assert list(frame.skills_used) == ["", "net_revenue", "net_revenue", "net_revenue"]  # the skill came from disk


async def test_validate_traces_a_sessions_references_in_order(sandbox_pool):
    checks = await validate_suite(load_suite("sessions"), sandbox_pool)
    assert all(check.ok for check in checks), [c for c in checks if not c.ok]


async def test_a_session_sharing_server_state_goes_on_from_the_previous_tasks_changes(sandbox_pool, tmp_path):
    tasks = ("pause-goran-moreau", "de-active-after-pause", "note-paused-de", "notes-on-paused-de")
    frame = rows(await Runner(config(tmp_path, arms=("codemode", "direct"), tasks=tasks), pool=sandbox_pool).run())
    assert frame.success.all(), frame.error_message.tolist()  # 8 active in DE only after the first task's pause
    suite = load_suite("sessions")
    unshared = replace(suite, sessions=tuple(replace(s, shared_servers=False) for s in suite.sessions))
    fresh = rows(await Runner(replace(config(tmp_path, "fresh", arms=("codemode",), tasks=tasks), suite=unshared),
                              pool=sandbox_pool).run())
    assert fresh.loc[("codemode", "de-active-after-pause")].answer == "9"  # fresh servers: the pause is gone


def test_shared_servers_are_refused_for_a_server_that_is_not_a_fixture(tmp_path):
    from harness.errors import UserError
    from harness.run.sessions import check_shared_servers

    path = tmp_path / "ext.yaml"
    path.write_text("suite: ext\nservers: [memory]\ntasks:\n  - {id: a, prompt: 'A', expected: 1, scorer: numeric}\n"
                    "sessions:\n  - {id: s, tasks: [a], shared_servers: true}\n")
    with pytest.raises(UserError, match="session 's': shared_servers keeps the state of fixture servers only"):
        check_shared_servers(load_suite(str(path)))


async def test_a_skill_sees_the_tools_the_tasks_code_imported_in_codemode_files(sandbox_pool, tmp_path):
    # codemode-files defines no tool up front: the skill's functions call the tools the task's code imported
    frame = rows(await Runner(config(tmp_path, arms=("codemode-files",)), pool=sandbox_pool).run())
    assert frame.success.all(), frame.error_message.tolist()
    assert list(frame.skills_used) == ["", "net_revenue", "net_revenue", "net_revenue"]
