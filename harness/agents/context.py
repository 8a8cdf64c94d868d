"""The one context a run (a sample: a task, an arm, a model, an epoch) is handed: everything an agent and the loop
may use, passed explicitly from the episode that builds it, never found through ambient state. An agent from
outside the package gets the same context, so its tool calls, LM calls and answer land in the same transcript.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.agents.scaffold import Scaffold
from harness.limits import Limits
from harness.mcp.servers import ServerSession
from harness.tasks.task import Task
from harness.trace.transcript import Transcript

if TYPE_CHECKING:
    import dspy

    from harness.agents.conversation import ScriptedUser, UserSimulator
    from harness.agents.sessions import SessionSlot

# (the answer as the scorers read it, the run's turns so far) -> whether the task's scorer accepts it (the scaffold's
# answer_feedback: a benchmark that tells its agent a wrong answer is wrong and lets it try again)
AnswerCheck = Callable[[str, int], Awaitable[bool]]


@dataclass(frozen=True)
class SampleContext:
    """One run's inputs. `task` is the task as the agent is given it (a conversation's prompt holds the user's
    opening); `session` the run's fresh servers (every tool call goes through it and is recorded); `transcript`
    where everything the run does is recorded as it happens; `lm` the run's model (None: the caller's dspy
    settings, as an optimizer's); `user` a conversation's simulated user; `check_answer` the task's scorer as an
    in-run check (answer_feedback); `slot` the task's place in its session (skills, workspace, server state)."""

    task: Task
    session: ServerSession
    scaffold: Scaffold
    limits: Limits
    transcript: Transcript
    lm: dspy.LM | None = None
    user: UserSimulator | ScriptedUser | None = None
    check_answer: AnswerCheck | None = None
    slot: SessionSlot | None = None

    @property
    def max_turns(self) -> int:
        """The turn limit the run is under (harness.limits.Limits.turns)."""
        return self.limits.turns(self.task.max_turns, self.scaffold.turn_limit)

    @property
    def conversing(self) -> bool:
        """Whether a reply without an action is a message to a simulated user rather than the answer."""
        return self.user is not None
