"""How an outcome is shown to the model, the same in every arm (harness.agents.loop): cut at the scaffold's
observation limit with a marker saying how much, several calls' observations each limited on its own and joined,
and the note on a repeated action."""

from __future__ import annotations


def limit_observation(text: str, limit: int) -> str:
    """The one rendering of an outcome's size limit, in every arm."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... [truncated: {len(text):,} chars, the first {limit:,} shown]"


def limit_observations(observation: str, observations: tuple[str, ...], limit: int) -> tuple[str, tuple[str, ...]]:
    """The observation the model sees of an outcome (its `observation`, or its several calls' `observations`),
    limited, and each call's, each limited on its own (a call's result gets the room it would get in a turn of its
    own), joined as the turn's observation."""
    if not observations:
        return limit_observation(observation, limit), ()
    each = tuple(limit_observation(text, limit) for text in observations)
    return join_observations(each), each


def join_observations(observations: tuple[str, ...]) -> str:
    """The turn's one observation text of several calls' observations."""
    return "\n\n".join(observations)


def repeat_note(turn_number: int) -> str:
    return (f"\n[Note: this is the same action as turn {turn_number} and it gave the same result. "
            "Repeating it will not change the result: do something different.]")
