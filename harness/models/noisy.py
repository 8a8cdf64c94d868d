"""`scripted:noisy:...`: a model that is noisy on purpose, so the report, the gate and a suite plan can be exercised
end to end under a known noise.

Each run succeeds with its task's chance: when it does, the model replays the task's reference solution exactly as
`scripted:reference` does (through the arm's own protocol, on the run's own servers); when it does not, it gives
up before acting (no tool call) and answers "no answer (simulated failure)", a wrong answer given early. Whether a
run succeeds is a seeded draw, so a run is reproducible; its rows name the model string and their cost_source says
the outcome was simulated.

The model string is `scripted:noisy:` followed by comma-separated options:

- `p=0.7`: every task's success chance; or a mixture `p=0.5@0.95+0.3@0.6+0.2@0.1` (shares of tasks @ their
  chance: half the tasks at 95%, 30% at 60%, 20% at 10%), each task's place in it drawn once from `task-seed`;
- `p.ARM=...`: the same for one arm (its tasks keep their place in the mixture, so arms stay paired);
- `shift.ARM=-0.1`: added to every task's chance in that arm (a true drop of 10 points; clipped to 0..1);
- `task.ID=0.3`: one task's chance (before any shift);
- `seed=3`: the outcome draws (default 0). A run's outcome depends on the seed, the task, the arm and the run's
  sample scope (its epoch): two runs with one seed draw alike, so independent repeats (an A/A pair) take
  different seeds, as two runs of a real model would differ;
- `task-seed=1`: which tasks get which chance of a mixture (default 0): the agent's strengths, kept across seeds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

import dspy

from harness.errors import UserError
from harness.models.engine import CallRecorder, make_lm
from harness.models.retry import RetryPolicy
from harness.models.scripted import ReferencePolicies, ScriptedEngine
from harness.models.tokens import TIKTOKEN_SOURCE
from harness.tasks.task import Task

NOISY_PREFIX = "scripted:noisy:"
NOISY_EXAMPLE = "scripted:noisy:p=0.7,seed=1"
SIMULATED_PRICING = "simulated: scripted:noisy draws each run's success by chance (no charge)"
GIVE_UP_ANSWER = "no answer (simulated failure)"
GIVE_UP_SUFFIX = "#simulated-failure"  # the give-up's task id: traced apart from the task's own reference


@dataclass(frozen=True)
class Mixture:
    """Tasks' success chances: (share of tasks, chance) components whose shares sum to 1."""

    components: tuple[tuple[float, float], ...]

    def chance_at(self, u: float) -> float:
        """The chance of the task at quantile `u` in [0, 1): components in the order written."""
        total = 0.0
        for share, chance in self.components:
            total += share
            if u < total:
                return chance
        return self.components[-1][1]

    @property
    def mean(self) -> float:
        return sum(share * chance for share, chance in self.components)


@dataclass(frozen=True)
class NoisySpec:
    """A parsed `scripted:noisy:` string (see the module docstring)."""

    base: Mixture
    arms: dict[str, Mixture] = field(default_factory=dict)
    shifts: dict[str, float] = field(default_factory=dict)
    tasks: dict[str, float] = field(default_factory=dict)
    seed: int = 0
    task_seed: int = 0

    def chance(self, task_id: str, arm: str) -> float:
        """The chance that a run of `task_id` in `arm` succeeds."""
        if task_id in self.tasks:
            chance = self.tasks[task_id]
        else:
            chance = self.arms.get(arm, self.base).chance_at(unit_draw("task", self.task_seed, task_id))
        return min(1.0, max(0.0, chance + self.shifts.get(arm, 0.0)))

    def succeeds(self, task_id: str, arm: str, scope: str) -> bool:
        """This run's outcome: a seeded draw below the chance (`scope`: the run's sample, e.g. its epoch)."""
        return unit_draw("run", self.seed, task_id, arm, scope) < self.chance(task_id, arm)


def unit_draw(*parts: object) -> float:
    """A uniform number in [0, 1) determined by `parts` (sha256, so draws are independent of Python's hash seed)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


def _fraction(model: str, name: str, text: str, low: float = 0.0) -> float:
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise UserError(f"model '{model}': {name}={text} is not a number (e.g. {NOISY_EXAMPLE})") from None
    if not low <= value <= 1.0:
        raise UserError(f"model '{model}': {name}={text} must be between {low:g} and 1")
    return value


def parse_mixture(text: str, where: str = "--mixture") -> Mixture:
    """A chance (`0.7`) or a mixture (`0.5@0.95+0.3@0.6+0.2@0.1`) written anywhere else (`where` names it in errors)."""
    return _mixture(where, where.lstrip("-"), text)


def _mixture(model: str, name: str, text: str) -> Mixture:
    if "@" not in text:
        return Mixture(((1.0, _fraction(model, name, text)),))
    components = []
    for part in text.split("+"):
        share, sep, chance = part.partition("@")
        if not sep:
            raise UserError(f"model '{model}': {name}={text}: write a mixture as SHARE@CHANCE+..., "
                            "e.g. p=0.5@0.95+0.3@0.6+0.2@0.1")
        components.append((_fraction(model, name, share), _fraction(model, name, chance)))
    if abs(sum(share for share, _ in components) - 1.0) > 1e-6:
        raise UserError(f"model '{model}': the shares of {name}={text} add up to "
                        f"{sum(s for s, _ in components):g}, not 1")
    return Mixture(tuple(components))


def _integer(model: str, name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UserError(f"model '{model}': {name}={text} is not a whole number") from None


def parse_noisy(model: str) -> NoisySpec:
    """The options of a `scripted:noisy:` string; anything else is a UserError naming what was written."""
    if not model.startswith(NOISY_PREFIX) or not model[len(NOISY_PREFIX):]:
        raise UserError(f"model '{model}': give the noisy model a success chance, e.g. {NOISY_EXAMPLE}")
    base: Mixture | None = None
    arms: dict[str, Mixture] = {}
    shifts: dict[str, float] = {}
    tasks: dict[str, float] = {}
    seeds = {"seed": 0, "task-seed": 0}
    for option in model[len(NOISY_PREFIX):].split(","):
        name, sep, value = (part.strip() for part in option.partition("="))
        kind, _, target = name.partition(".")
        if not sep or not value:
            raise UserError(f"model '{model}': option '{option}' is not NAME=VALUE (e.g. {NOISY_EXAMPLE})")
        if name == "p":
            base = _mixture(model, name, value)
        elif name in seeds:
            seeds[name] = _integer(model, name, value)
        elif kind == "p" and target:
            arms[target] = _mixture(model, name, value)
        elif kind == "shift" and target:
            shifts[target] = _fraction(model, name, value, low=-1.0)
        elif kind == "task" and target:
            tasks[target] = _fraction(model, name, value)
        else:
            raise UserError(f"model '{model}': unknown option '{name}' (known: p, p.ARM, shift.ARM, task.ID, seed, "
                            "task-seed)")
    if base is None:
        raise UserError(f"model '{model}': give p=CHANCE (or a mixture), e.g. {NOISY_EXAMPLE}")
    return NoisySpec(base, arms, shifts, tasks, seeds["seed"], seeds["task-seed"])


def give_up_task(task: Task) -> Task:
    """The task as a failing run plays it: a reference that acts not at all and prints a wrong answer (traced and
    replayed through the arm's protocol like any reference, under an id of its own)."""
    return replace(task, id=task.id + GIVE_UP_SUFFIX, reference=f"print({GIVE_UP_ANSWER!r})")


@dataclass
class NoisyProvider:
    """Per run: the reference's replay when the run's draw succeeds, the give-up's replay otherwise."""

    name: str
    spec: NoisySpec
    policies: ReferencePolicies
    token_source: str = TIKTOKEN_SOURCE
    retry: RetryPolicy = RetryPolicy()

    async def lm_for(self, task: Task, arm: str, recorder: CallRecorder | None = None,
                     sample: Any = None) -> dspy.LM:
        scope = recorder.cache_scope if recorder is not None else ""
        played = task if self.spec.succeeds(task.id, arm, scope) else give_up_task(task)
        policy = await self.policies(played, arm, sample)
        return make_lm(self.name, ScriptedEngine(policy, name=self.name), retry=self.retry, recorder=recorder)


def noisy_provider(model: str, policies: ReferencePolicies | None) -> NoisyProvider:
    """`scripted:noisy:...`: its replays come from the caller, who traces references in its sandbox."""
    if policies is None:
        raise UserError(f"{model} needs the runner's sandbox to trace references")
    return NoisyProvider(model, parse_noisy(model), policies)
