"""A session's skills and workspace through real sandbox leases: what one task leaves, the next task of the same
session finds; another session, or a task outside any, finds nothing."""

import pytest

from harness.agents.sessions import (
    SessionPlace,
    SessionSlot,
    SessionState,
    session_api,
    session_lease,
)

pytestmark = pytest.mark.sandbox

SKILL = 'def double(x):\n    return 2 * x\n'


def no_tools(name, arguments):
    raise ValueError("no tools here")


async def run_task(pool, slot: SessionSlot | None, code: str) -> str:
    """One task's code in its own lease, in the session place `slot` (None: outside any session)."""
    async with session_lease(pool, no_tools, slot) as sandbox:
        result = await sandbox.execute(code)
    return result.stdout.strip() if result.ok else f"Error: {result.error}"


def slot(state: SessionState, position: int = 1, session: str = "s", **parts) -> SessionSlot:
    return SessionSlot(SessionPlace(session, position, state, parts.get("skills", True), parts.get("workspace", True)))


async def test_a_skill_saved_in_one_task_is_imported_by_the_next_and_absent_elsewhere(sandbox_pool):
    first = slot(SessionState(), position=0)
    saved = await run_task(sandbox_pool, first, f"print(save_skill('doubler', {SKILL!r}, 'double(x): twice x'))")
    assert saved.startswith("saved skills/doubler.py")
    assert first.after.skills == {"doubler": "double(x): twice x"} and first.skills_saved == ("doubler",)

    second = slot(first.after)
    assert await run_task(sandbox_pool, second, "from skills.doubler import double\nprint(double(21))") == "42"
    assert second.used == ("doubler",) and second.skills_saved == ()

    other = slot(SessionState(), position=0, session="other")
    assert "ModuleNotFoundError" in await run_task(sandbox_pool, other, "from skills.doubler import double")
    assert "POLICY_VIOLATION" in await run_task(sandbox_pool, None, "from skills.doubler import double")


async def test_a_skill_can_call_the_tools_and_a_source_breaking_the_policy_is_refused(sandbox_pool):
    def tools(name, arguments):
        return {"echo": arguments}

    first = slot(SessionState(), position=0)
    async with session_lease(sandbox_pool, tools, first, prelude=(
            "def echo(text: str):\n    return _harness_call_tool_json('echo', {'text': text})\n")) as sandbox:
        refused = await sandbox.execute("save_skill('bad', 'exec(\"1\")', 'runs anything')")
        await sandbox.execute("save_skill('shout', 'def shout(t):\\n    return echo(t)[\"echo\"][\"text\"].upper()', 'x')")
    assert "POLICY_VIOLATION" in refused.error and "exec" in refused.error
    assert list(first.after.skills) == ["shout"]
    second = slot(first.after)
    async with session_lease(sandbox_pool, tools, second, prelude=(
            "def echo(text: str):\n    return _harness_call_tool_json('echo', {'text': text})\n")) as sandbox:
        result = await sandbox.execute("from skills.shout import shout\nprint(shout('hi'))")
    assert result.stdout.strip() == "HI"


async def test_workspace_files_persist_within_a_session_only(sandbox_pool):
    first = slot(SessionState(), position=0)
    write = "with open('/workspace/notes.txt', 'w') as f:\n    f.write('kept')\nprint('ok')"
    assert await run_task(sandbox_pool, first, write) == "ok"
    assert first.after.workspace_files == ("notes.txt",)

    read = "print(open('/workspace/notes.txt').read())"
    assert await run_task(sandbox_pool, slot(first.after), read) == "kept"
    assert "FileNotFoundError" in await run_task(sandbox_pool, slot(SessionState(), session="other"), read)
    # the lease's reset deleted the files: a lease outside any session sees no trace of them
    assert "False" in await run_task(sandbox_pool, slot(SessionState(), session="third"),
                                     "import os\nprint(os.path.exists('/workspace/notes.txt'))")


async def test_with_both_parts_off_nothing_is_carried_and_the_prompt_says_nothing(sandbox_pool):
    carried = SessionState((("/workspace/notes.txt", b"kept"), ("/skills/doubler.py", SKILL.encode())))
    off = slot(carried, skills=False, workspace=False)
    read = "print(open('/workspace/notes.txt').read())"
    assert "FileNotFoundError" in await run_task(sandbox_pool, off, read)
    assert off.after is None  # not recorded: the session only ordered the task
    assert session_api(off) == ""
    no_skills, no_workspace = session_api(slot(carried, skills=False)), session_api(slot(carried, workspace=False))
    assert no_skills.endswith("there now: notes.txt") and "save_skill" not in no_skills
    assert "#   doubler" in no_workspace and "/workspace" not in no_workspace
