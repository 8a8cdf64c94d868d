"""How `scripted:reference` replays a reference through smolagents' own formats (the bridge's arms,
smolagents_bridge.py): its ToolCallingAgent's native calls, each result or error sent back in a user message, and its
CodeAgent's replies, a thought and code between its code tags, `final_answer(...)` in the code. Its own module, so the
bridge's agent process does not import the replay's pieces."""

from __future__ import annotations

from harness.agents.replay import (
    CallFormat,
    ReferenceTrace,
    call_groups,
    calls_policy,
    code_diverged,
    final_text,
    last_printed_line,
    register_replay,
)
from harness.models.scripted import Policy, ScriptedRequest
from harness.tasks.task import Task

SMOL_CODE_TAGS = ("<code>", "</code>")  # smolagents' CodeAgent's default code tags (its code_agent.yaml prompt)
# how smolagents shows a code run's prints, its value, and an error its step raised (memory.py, agents.py)
SMOL_LOGS, SMOL_OUTPUT, SMOL_ERROR = "Execution logs:\n", "Last output from code snippet:", "Error:\n"


def _user_observation(request: ScriptedRequest, calls: int) -> list[str]:
    """smolagents sends a call's observation, or the error it raised, as a user message (none before any call)."""
    last = request.messages[-1] if request.messages else {}
    text = str(last.get("content", ""))
    return [text[text.index(SMOL_ERROR):] if SMOL_ERROR in text else text] if calls > 0 else []


SMOL_TOOLS = CallFormat(observations=_user_observation, result_per_call=False)


@register_replay("smol_tools")
def replay_smol_tools(trace: ReferenceTrace, task: Task, parallel: bool) -> Policy:
    """The ToolCallingAgent's protocol: the reference's calls as native calls, one a reply, each result or error read
    from the user message smolagents sends it back in, then its final_answer tool."""
    return calls_policy(trace, call_groups(trace, False), SMOL_TOOLS)


def smol_code_reply(trace: ReferenceTrace, reference: str, request: ScriptedRequest) -> str:
    """The reference through smolagents' CodeAgent, in the reply format its prompt asks for (a thought, then code
    between its code tags): the reference code first; then `final_answer(...)` of the line it printed last, read
    from the observation the agent sent back (its execution logs); no answer (`final_text`) where its executor
    raised, or the code printed errors the traced run did not."""
    opened, closed = SMOL_CODE_TAGS
    if not any(m.get("role") == "assistant" for m in request.messages):
        return f"Thought: I run the reference solution.\n{opened}\n{reference.strip()}\n{closed}"
    shown = str(request.messages[-1].get("content") or "") if request.messages else ""
    raised = SMOL_ERROR in shown
    logs = shown.split(SMOL_LOGS, 1)[1] if SMOL_LOGS in shown else ""
    logs = logs.split(SMOL_OUTPUT, 1)[0].split(SMOL_ERROR, 1)[0]
    answer = final_text(trace, raised or code_diverged(trace, logs), last_printed_line(logs))
    return f"Thought: I give the answer it printed.\n{opened}\nfinal_answer({answer!r})\n{closed}"


@register_replay("smol_code")
def replay_smol_code(trace: ReferenceTrace, task: Task, parallel: bool) -> Policy:
    """The CodeAgent's protocol: the reference code in its code tags, then final_answer() in code, of the line it
    printed last (`smol_code_reply`)."""
    def policy(request: ScriptedRequest) -> str:
        return smol_code_reply(trace, task.reference or "", request)

    return policy
