"""Conversation tasks: a task with a user (`Task.user`) is played by a second model, the simulated user, and the
agent talks with it instead of answering once.

    start: the user model answers the agent's fixed greeting with its opening message; the agent's task text is
           the task's prompt (if any), the conversation rule below and that opening; the task's system instructions
           (a benchmark's policy) are in the agent's system message, as in every run.
    turn:  as in every run (one LM call, one action); a reply without an action (or the final_answer tool, or
           final_answer() in code) is a message to the user, and the user's reply is that turn's observation,
           shown by each arm as its own history shows a message from the user.
    end:   the user ends the conversation (a stop token in its reply, the protocol τ²-bench's user simulator
           uses), or the run reaches its turn limit (max_turns, an error as in every run).

The scaffold's rules that refuse an answer (refuse_answer_before_action, refuse_unread_answer,
refuse_error_answer) and the answer-or-act grammar judge a final answer; in a conversation no message to the user
is a final answer (the run ends when the user ends it), and a message before any tool call is what a support
agent must send first (asking who the user is), so none of them applies to messages to the user. The user's LM
records its calls with the role "user" (its recorder's), apart from the agent's.

The episode (harness.run.episode) builds the user and hands it to the run in its context (SampleContext.user);
the loop (harness.agents.loop) reads it there, so no built-in arm needs to know about conversations. An agent from
outside runs its own loop: it is called once per user turn, its answer the message to the user and the user's reply
the next call's prompt, with the conversation so far as its history (harness.agents.foreign.ForeignAgent.converse).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import dspy

from harness.tasks.task import UserScenario
from harness.trace.transcript import Transcript

# The agent's first message, fixed (not generated), as τ²-bench opens every conversation.
GREETING = "Hi! How can I help you today?"
# What ends a conversation when the user writes it: done, transferred to a human, or out of the scenario's scope.
STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")

# The agent's side: what its task text says about talking with a user (in every arm, after the task's prompt).
CONVERSATION_RULE = (
    "You are talking with a user. Each reply of yours without a tool call (or a call of final_answer(message)) is "
    "a message sent to the user, who answers you; it does not end the task. Use the tools to look up and change "
    "what the user asks for, as the rules above allow, and tell the user what you did. The conversation ends when "
    "the user ends it.")

# The user's side: the user model's system prompt, with the scenario after it.
USER_PROMPT = (
    "You play a customer talking with a customer-service agent, so that the agent can be tested. Follow the "
    "scenario below.\n"
    "- Write only what the customer says: one short message at a time, in plain words, as a person would. You are "
    "not the agent: never offer help, and never write tool calls or code.\n"
    "- Give details from the scenario only when the agent asks for them or when they are needed. Never make up "
    "details the scenario does not give: if asked for one, say you do not know it.\n"
    "- Ask only for what the scenario says you want, and answer the agent's questions as the scenario says you "
    "would.\n"
    f"- When what you wanted is done, or the agent says it cannot be done, end the conversation by writing "
    f"{STOP_TOKENS[0]} at the end of your message. If the agent transfers you to a human agent, write "
    f"{STOP_TOKENS[1]}. If the scenario does not tell you how to go on, write {STOP_TOKENS[2]}.\n\n"
    "Scenario:\n")


@dataclass(frozen=True)
class UserReply:
    text: str  # what the agent is shown: the user's message without its stop token
    ended: bool  # the user ended the conversation


def user_ended(text: str) -> bool:
    return any(token in text for token in STOP_TOKENS)


def shown_text(text: str) -> str:
    """The user's message as the agent sees it: the stop token is the protocol between harness and user model."""
    for token in STOP_TOKENS:
        text = text.replace(token, "")
    return text.strip()


def _output_text(output: Any) -> str:
    return str(output.get("text") or "") if isinstance(output, dict) else str(output or "")


@dataclass
class UserSimulator:
    """The simulated user of one run: the scenario it plays, its LM (the run's user model) and the conversation
    from its side (the agent's messages as the other speaker's). `turns` counts its LM calls."""

    scenario: UserScenario
    lm: dspy.LM
    messages: list[dict[str, str]] = field(default_factory=list)
    turns: int = 0
    # called with each message of the user's as the agent sees it (the id guard counts what the user said as seen)
    listeners: list[Callable[[str], None]] = field(default_factory=list)

    async def _speak(self) -> UserReply:
        prompt = [{"role": "system", "content": USER_PROMPT + self.scenario.instructions}, *self.messages]
        outputs = await self.lm.acall(messages=prompt)
        text = _output_text(outputs[0]) if outputs else ""
        self.turns += 1
        self.messages.append({"role": "assistant", "content": text})
        for listener in self.listeners:
            listener(shown_text(text))
        return UserReply(shown_text(text), user_ended(text))

    def conversation(self) -> tuple[tuple[str, str], ...]:
        """The messages so far, in order, each ("agent" or "user", text as the other side saw it)."""
        return tuple(("agent", m["content"]) if m["role"] == "user" else ("user", shown_text(m["content"]))
                     for m in self.messages)

    async def open(self) -> str:
        """The user's opening message, answering the agent's fixed greeting (a stop token in it is ignored: a
        conversation has at least one message of the agent's)."""
        self.messages.append({"role": "user", "content": GREETING})
        return (await self._speak()).text

    async def reply(self, message: str) -> UserReply:
        """The user's answer to the agent's message."""
        self.messages.append({"role": "user", "content": message})
        return await self._speak()

    def task_text(self, prompt: str, opening: str) -> str:
        return conversation_prompt(prompt, opening)


@dataclass
class ScriptedUser:
    """A user whose messages are fixed (UserScenario.turns, a benchmark's user turns such as BFCL's): the first is
    the agent's task text, each reply of the agent's without an action ends its turn and is answered by the next,
    and the reply to the last ends the conversation. No LM plays it. `turn_steps` holds, per turn ended, the step
    whose message ended it (each also an `user_turn` info event in the transcript), so the calls of each turn can
    be told apart (ScoreContext.user_turn_steps). `on_turn` is told each later turn's index before its message is
    given (the run's servers may offer tools held back until then: harness.mcp.held_tools)."""

    scenario: UserScenario
    transcript: Transcript
    messages: list[dict[str, str]] = field(default_factory=list)
    turns: int = 0
    listeners: list[Callable[[str], None]] = field(default_factory=list)
    turn_steps: list[int] = field(default_factory=list)
    on_turn: Callable[[int], Awaitable[object]] | None = None

    def _say(self, text: str, ended: bool) -> UserReply:
        self.turns += 1
        self.messages.append({"role": "assistant", "content": text})
        for listener in self.listeners:
            listener(text)
        return UserReply(text, ended)

    async def open(self) -> str:
        return self._say(self.scenario.turns[0], len(self.scenario.turns) == 0).text

    async def reply(self, message: str) -> UserReply:
        """The next turn's message (the conversation ends after the last turn's answer)."""
        self.messages.append({"role": "user", "content": message})
        step = self.transcript.step if self.transcript.step is not None else -1
        self.turn_steps.append(step)
        self.transcript.info_event("user_turn", {"ended": len(self.turn_steps) - 1, "step": step})
        if len(self.turn_steps) >= len(self.scenario.turns):
            return UserReply("", True)
        if self.on_turn is not None:
            await self.on_turn(len(self.turn_steps))
        return self._say(self.scenario.turns[len(self.turn_steps)], False)

    def conversation(self) -> tuple[tuple[str, str], ...]:
        return tuple(("agent", m["content"]) if m["role"] == "user" else ("user", m["content"]) for m in self.messages)

    def task_text(self, prompt: str, opening: str) -> str:
        """The task text is the first turn's message as the benchmark gives it (after the task's prompt, if any)."""
        return f"{prompt}\n\n{opening}" if prompt.strip() else opening


def conversation_prompt(prompt: str, opening: str) -> str:
    """The agent's task text in a conversation: the task's prompt if it has one (a benchmark's rules are its system
    instructions instead: harness.tasks.task.Task), the conversation rule, and the conversation so far (the fixed
    greeting and the user's opening)."""
    lead = f"{prompt}\n\n" if prompt.strip() else ""
    return f"{lead}{CONVERSATION_RULE}\n\nYou said: {GREETING}\nThe user said: {opening}"
