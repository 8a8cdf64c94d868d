"""What an optimizer runs: episodes of the suite as a DSPy program (`EpisodeProgram`: forward(task_id) runs one
whole episode through harness.run.episode, the same as a row of `harness run`), scored by the suite's scorer as a
DSPy metric, with a tracker of every candidate's scores (the fallback when an optimization is interrupted)."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import dspy
from dspy.utils.hasher import Hasher

from harness.agents.arms import build_agent
from harness.agents.programs import program_hash, tuned_state
from harness.agents.scaffold import Scaffold
from harness.limits import Limits
from harness.run.episode import episode
from harness.tasks.scorers import Score
from harness.tasks.task import Suite, Task
from harness.trace.errors import RunError
from harness.trace.steps import CodeStep, ToolStep, TrajectoryStep

PASSING_SCORE = 1.0  # a bootstrapped demo comes from an episode that passed outright


class ProgressHook(Protocol):
    """What a caller sees while optimizing (the CLI draws a progress bar with an ETA from it)."""

    def planned(self, episodes: int) -> None: ...

    def episode(self, phase: str, task_id: str, score: float) -> None: ...


@dataclass
class _Candidate:
    state: dict[str, Any]
    scores: dict[str, list[float]] = field(default_factory=dict)

    @property
    def coverage(self) -> int:
        return len(self.scores)

    @property
    def mean(self) -> float:
        values = [v for vs in self.scores.values() for v in vs]
        return sum(values) / len(values) if values else 0.0


class Tracker:
    """Every episode's score, by the content hash of the program that ran it: the interrupt fallback."""

    def __init__(self, progress: ProgressHook | None = None):
        self.progress = progress
        self.phase = "dev before"
        self.optimizer_episodes = 0
        self._candidates: dict[str, _Candidate] = {}
        self._passing_traces: list[list[tuple[Any, dspy.Example]]] = []  # (signature, demo) per passing episode
        self._lock = threading.Lock()

    def record(self, program: dspy.Module, task_id: str, score: Score) -> None:
        if self.phase == "optimize":
            state = tuned_state(program)
            with self._lock:
                self.optimizer_episodes += 1
                candidate = self._candidates.setdefault(program_hash(state), _Candidate(state))
                candidate.scores.setdefault(task_id, []).append(score.value)
        if self.progress is not None:
            self.progress.episode(self.phase, task_id, score.value)

    def record_passing_trace(self, trace: list[tuple[Any, dict[str, Any], Any]]) -> None:
        """A passing episode's dspy trace (predictor, inputs, outputs per call), kept as demos: the metric's
        public `trace` argument, which is what BootstrapFewShot builds its demos from."""
        steps = [(predictor.signature, dspy.Example(augmented=True, **inputs, **outputs))
                 for predictor, inputs, outputs in trace]
        with self._lock:
            self._passing_traces.append(steps)

    def bootstrapped_state(self, program: dspy.Module, max_demos: int) -> dict[str, Any] | None:
        """`program` with the demos bootstrapped so far, chosen as BootstrapFewShot chooses them when it finishes:
        per passing episode one call of each predictor (the last, or 50/50 one of the earlier ones, seeded by
        the calls), in episode order, at most `max_demos`."""
        with self._lock:
            episodes = list(self._passing_traces)
        if not episodes:
            return None
        for _, predictor in program.named_predictors():
            demos: list[dspy.Example] = []
            for steps in episodes:
                mine = [demo for signature, demo in steps if signature.equals(predictor.signature)]
                if len(mine) > 1:
                    rng = random.Random(Hasher.hash(tuple(mine)))
                    mine = [rng.choice(mine[:-1]) if rng.random() < 0.5 else mine[-1]]
                demos.extend(mine)
            predictor.demos = demos[:max_demos]
        return tuned_state(program)

    def best_state(self) -> dict[str, Any] | None:
        """The highest mean score among the candidates run on the most distinct tasks (first seen wins ties)."""
        with self._lock:
            candidates = list(self._candidates.values())
        if not candidates:
            return None
        most = max(c.coverage for c in candidates)
        return max((c for c in candidates if c.coverage == most), key=lambda c: c.mean).state


@dataclass(frozen=True)
class EpisodeEnv:
    """What every episode shares and no optimizer may copy (DSPy deep-copies candidate programs)."""

    tasks: dict[str, Task]
    arm: str
    pool: Any  # SandboxPool for the code-mode arms, else None
    tracker: Tracker
    timeout_s: float
    tool_timeout_s: float
    scaffold: Scaffold

    def __deepcopy__(self, memo: dict) -> EpisodeEnv:
        return self


def _agent(env: EpisodeEnv, program: dspy.Module) -> Any:
    return build_agent(env.arm, env.pool, env.scaffold, program=program)


def episode_feedback(task: Task, answer: str, score: Score, error: RunError | None,
                     steps: Sequence[TrajectoryStep] = ()) -> str:
    """What GEPA's reflection model reads about one episode."""
    lines = [f"{'Correct' if score.passed else 'Incorrect'} (score {score.value:g}): {score.reason}.",
             f"Final answer: {answer!r}; expected: {task.expected!r}."]
    if error is not None:
        lines.append(f"The run ended with an error ({error.type}): {error.message}")
    for number, step in enumerate(steps, 1):
        if isinstance(step, CodeStep) and step.error:
            label = "policy violation" if step.error_kind == "policy" else f"sandbox error ({step.error_kind})"
            lines.append(f"Step {number}: {label}: {step.error.strip().splitlines()[-1][:300]}")
        elif isinstance(step, ToolStep):
            for call in step.calls:
                if call.observation.startswith(("Error", "Execution error")):
                    lines.append(f"Step {number}: tool {call.tool} failed: {call.observation[:300]}")
    return "\n".join(lines)


async def run_episode(env: EpisodeEnv, program: dspy.Module, task: Task) -> dspy.Prediction:
    """One full run of a task with `program`'s predictors, scored by the suite: the same episode as a row of
    `harness run` (harness.run.episode), under the optimizer's own dspy settings (its trace collects demos)."""
    done = await episode(task, lambda: _agent(env, program), scaffold=env.scaffold,
                         limits=Limits(timeout_s=env.timeout_s, tool_timeout_s=env.tool_timeout_s))
    env.tracker.record(program, task.id, done.score)
    error = done.error
    return dspy.Prediction(answer=done.answer, score=done.score.value, passed=done.score.passed,
                           reason=done.score.reason, error=f"{error.type}: {error.message}" if error else "",
                           feedback=episode_feedback(task, done.answer, done.score, error, done.transcript.steps))


class EpisodeProgram(dspy.Module):
    """The optimizer's student: forward(task_id) runs a whole episode with `self.program`'s predictors."""

    def __init__(self, env: EpisodeEnv, program: dspy.Module):
        super().__init__()
        self.env = env
        self.program = program  # the arm's program (its step predictor): the only predictor an optimizer sees

    async def aforward(self, task_id: str, task: str = "") -> dspy.Prediction:
        return await run_episode(self.env, self.program, self.env.tasks[task_id])

    def forward(self, task_id: str, task: str = "") -> dspy.Prediction:
        return asyncio.run(self.aforward(task_id=task_id, task=task))


class EpisodeMetric:
    """The suite's score of an episode (computed inside it) as a DSPy metric; GEPA's variant adds feedback. With
    a tracker, the trace of each passing episode is kept (what an interrupted BootstrapFewShot leaves behind)."""

    def __init__(self, feedback: bool = False, tracker: Tracker | None = None):
        self.feedback, self.tracker = feedback, tracker

    def __call__(self, gold: dspy.Example, pred: dspy.Prediction | None, trace: Any = None,
                 pred_name: str | None = None, pred_trace: Any = None) -> float | dspy.Prediction:
        score = float(pred.score) if pred is not None and "score" in pred else 0.0
        if self.tracker is not None and trace and score >= PASSING_SCORE:
            self.tracker.record_passing_trace(trace)
        if not self.feedback:
            return score
        text = pred.feedback if pred is not None and "feedback" in pred else "The program failed before answering."
        return dspy.Prediction(score=score, feedback=text)


def examples(suite: Suite, task_ids: tuple[str, ...]) -> list[dspy.Example]:
    """Inputs are the task id (what forward needs) and the prompt (what instruction proposers read)."""
    return [dspy.Example(task_id=t.id, task=t.prompt, expected=t.expected).with_inputs("task_id", "task")
            for t in suite.select(list(task_ids))]
