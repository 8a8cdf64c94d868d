"""How `scripted:reference` replays a reference to an agent from outside through the run's chat endpoint (an agent of
one's own, Pydantic AI's, the OpenAI Agents SDK's): the reference's calls as native tool calls, one a reply, then the
answer as a reply without a tool call, as any OpenAI-compatible client reads an answer. Its own module, so the
packages an agent's process imports (the endpoints, harness.agents.foreign) stay free of the replay's."""

from __future__ import annotations

from harness.agents.replay import CallFormat, ReferenceTrace, call_groups, calls_policy, register_replay
from harness.models.scripted import Policy, ScriptedReply
from harness.tasks.task import Task


def _text_answer(answer: str) -> ScriptedReply:
    return ScriptedReply(text=answer)


CHAT = CallFormat(answer=_text_answer)  # native tool calls, each result its own tool message; the answer as text


@register_replay("chat_tools")
def replay_chat_tools(trace: ReferenceTrace, task: Task, parallel: bool) -> Policy:
    """The reference's calls one a reply (whatever the scaffold: an agent from outside runs under its own), then its
    answer as text; no answer where a call failed that did not when traced (replay.final_text)."""
    return calls_policy(trace, call_groups(trace, False), CHAT)
