"""`harness optimize`: tune an arm's prompt (instructions and demos) with a DSPy optimizer, scored by the suite.

How it fits DSPy. Optimizers call `student(**example.inputs())` and find the predictor calls they traced by
predictor identity, so the student is ONE module, `EpisodeProgram`, whose forward runs a whole episode for a
task id: fresh servers, a sandbox lease (code mode), the arm's agent driven by the module's own predictors,
then the suite's scorer on the answer and the servers' end state. The score rides on the returned Prediction
and the metric reads it: the suite's scorers stay the only definition of success (the end state is gone once
the servers close, so the scorer must run inside the episode). For GEPA the metric also returns feedback: the
scorer's reason, the final answer against the expected one, and what went wrong (sandbox errors, policy
violations, tool errors, the run's own error).

What is tuned, per arm: the arm's one step predictor (harness.agents.arms: `Arm.new_program`), its instructions
and demos. The tools are never part of the instructions: code mode's typed stubs and direct's function
definitions are INPUT fields, and react appends the run's own tool list at call time; so no optimizer can
rewrite a tool list away, and a program tuned on one task's tools runs with another task's tools.

Episodes run one at a time (num_threads=1): each forward owns an event loop (`asyncio.run`), and a local model
serializes its calls anyway. The sandbox pool is thread-safe and loop-agnostic, so it serves every episode.

Budget: roughly the number of episodes the optimizer may run on the train split (exact for GEPA, an upper
bound for bootstrap, an estimate for MIPROv2 and SIMBA); dev evaluations before and after come on top.

Interrupt: Ctrl-C stops the optimizer and keeps the best program so far: for bootstrap, the demos collected so
far; otherwise the candidate with the highest mean score among those evaluated on the most train tasks.
"""

from __future__ import annotations

import asyncio
import importlib.util
import random
from dataclasses import dataclass
from typing import Any

import dspy

from harness.agents.arms import get_arm
from harness.agents.programs import DevScore, SavedProgram, new_program, tuned_state
from harness.agents.scaffold import Scaffold, default_scaffold
from harness.defaults import DEFAULT_TIMEOUT_S, DEFAULT_TOOL_TIMEOUT_S
from harness.errors import UserError
from harness.optimize.episodes import (
    PASSING_SCORE,
    EpisodeEnv,
    EpisodeMetric,
    EpisodeProgram,
    ProgressHook,
    Tracker,
    examples,
)
from harness.sandbox import SandboxPool
from harness.tasks.task import Suite

OPTIMIZERS: tuple[str, ...] = ("bootstrap", "mipro", "gepa", "simba")
DEFAULT_EPISODES_PER_TRAIN_TASK = 4  # --budget default: this many episodes per train task
DEFAULT_TRAIN_FRACTION = 0.5


@dataclass(frozen=True)
class OptimizeConfig:
    suite: Suite
    arm: str
    optimizer: str
    model: str
    train_ids: tuple[str, ...]
    dev_ids: tuple[str, ...]
    budget: int
    seed: int = 0
    max_demos: int = 2
    reflection_model: str = ""
    timeout_s: float = DEFAULT_TIMEOUT_S
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
    scaffold: Scaffold | None = None  # None: the model's default (harness.agents.scaffold.default_scaffold)

    @property
    def rules(self) -> Scaffold:
        """The scaffold every episode runs under, saved with the program."""
        return self.scaffold or default_scaffold(self.model)


# ---- train/dev split ----

def _fraction(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    if not 0 < number <= 1:
        raise UserError(f"a split fraction must be in (0, 1], got {value}")
    return number


def split_tasks(suite: Suite, train: str | None, dev: str | None, seed: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Train and dev task ids from ids ("a,b") or fractions ("0.5"); fractions draw from a seeded shuffle.
    Dev defaults to every task not in train: it is held out, never seen by the optimizer."""
    ids = [t.id for t in suite.tasks]
    shuffled = random.Random(seed).sample(ids, len(ids))

    def pick(value: str, pool: list[str], flag: str) -> list[str]:
        fraction = _fraction(value)
        if fraction is None:
            wanted = [v.strip() for v in value.split(",") if v.strip()]
            suite.select(wanted)  # unknown ids are a UserError
            return [i for i in ids if i in wanted]
        count = max(1, round(fraction * len(ids)))
        if count > len(pool):
            raise UserError(f"{flag} {value}: {count} task(s) wanted, only {len(pool)} left")
        return pool[:count]

    train_ids = pick(train or str(DEFAULT_TRAIN_FRACTION), shuffled, "--train")
    rest = [i for i in shuffled if i not in train_ids]
    dev_ids = pick(dev, rest, "--dev") if dev else [i for i in ids if i in rest]
    overlap = sorted(set(train_ids) & set(dev_ids))
    if overlap:
        raise UserError(f"--dev must be held out from --train; both name {', '.join(overlap)}")
    order = {i: n for n, i in enumerate(ids)}
    return tuple(sorted(train_ids, key=order.get)), tuple(sorted(dev_ids, key=order.get))


# ---- optimizers ----

@dataclass(frozen=True)
class Plan:
    optimizer: Any
    compile_kwargs: dict[str, Any]
    episodes: int  # estimated optimizer episodes, for the ETA


def plan(config: OptimizeConfig, reflection_lm: dspy.LM | None, tracker: Tracker | None = None) -> Plan:
    """The optimizer with its knobs set from --budget (episodes on the train split)."""
    n, budget = len(config.train_ids), max(1, config.budget)
    demos, prompt_model = config.max_demos, reflection_lm
    if config.optimizer == "bootstrap":
        rounds = max(1, budget // n)
        optimizer = dspy.BootstrapFewShot(metric=EpisodeMetric(tracker=tracker), metric_threshold=PASSING_SCORE,
                                          max_bootstrapped_demos=demos,
                                          max_labeled_demos=0, max_rounds=rounds)
        return Plan(optimizer, {}, min(budget, n) * rounds)
    if config.optimizer == "mipro":
        if importlib.util.find_spec("optuna") is None:
            raise UserError("mipro searches with optuna, which is not installed: pip install 'harness[optimize]'")
        trials = max(1, budget // n - 3)  # two bootstrap passes for demo candidates + the default program
        minibatch = n > 10
        optimizer = dspy.MIPROv2(metric=EpisodeMetric(), prompt_model=prompt_model, auto=None, num_candidates=3,
                                 max_bootstrapped_demos=demos, max_labeled_demos=0, num_threads=1, seed=config.seed,
                                 metric_threshold=PASSING_SCORE, verbose=False, track_stats=False)
        kwargs = {"num_trials": trials, "minibatch": minibatch, "minibatch_size": min(10, n), "valset": "train"}
        evals = trials * 10 + (trials // 5 + 2) * n if minibatch else (trials + 1) * n
        return Plan(optimizer, kwargs, 2 * n + evals)
    if config.optimizer == "gepa":
        if reflection_lm is None:
            raise UserError("gepa needs a reflection model (--reflection-model, default: --model)")
        optimizer = dspy.GEPA(metric=EpisodeMetric(feedback=True), max_metric_calls=budget, reflection_lm=reflection_lm,
                              reflection_minibatch_size=min(3, n), num_threads=1, seed=config.seed,
                              track_stats=False)
        return Plan(optimizer, {"valset": "train"}, budget)
    if config.optimizer == "simba":
        bsize, candidates = min(4, n), 2
        per_step = bsize * candidates + (candidates + 1) * bsize
        steps = max(1, (budget - n) // per_step)
        optimizer = dspy.SIMBA(metric=EpisodeMetric(), bsize=bsize, num_candidates=candidates, max_steps=steps,
                               max_demos=demos, prompt_model=prompt_model, num_threads=1)
        return Plan(optimizer, {"seed": config.seed}, steps * per_step + min(steps + 1, candidates + 1) * n)
    raise UserError(f"unknown optimizer '{config.optimizer}' (known: {', '.join(OPTIMIZERS)})")


def _compile(chosen: Plan, student: EpisodeProgram, trainset: list[dspy.Example]) -> EpisodeProgram:
    kwargs = dict(chosen.compile_kwargs)
    if kwargs.get("valset") == "train":  # selection happens on train: dev stays held out
        kwargs["valset"] = trainset
    return chosen.optimizer.compile(student, trainset=trainset, **kwargs)


def _interrupted_state(chosen: Plan, tracker: Tracker, config: OptimizeConfig) -> dict[str, Any] | None:
    """The best program so far. BootstrapFewShot builds its program only at the end, from the passing traces
    its metric was shown: the tracker kept those too, and builds it the same way."""
    if isinstance(chosen.optimizer, dspy.BootstrapFewShot):
        return tracker.bootstrapped_state(new_program(config.arm, config.rules), config.max_demos)
    return tracker.best_state()


def evaluate_dev(student: EpisodeProgram, dev: list[dspy.Example]) -> DevScore | None:
    """One episode per dev task with the student's current predictors (no optimizer involved)."""
    if not dev:
        return None
    predictions = [(example.task_id, student(task_id=example.task_id, task=example.task)) for example in dev]
    return DevScore(success_rate=sum(bool(p.passed) for _, p in predictions) / len(predictions),
                    mean_score=sum(float(p.score) for _, p in predictions) / len(predictions),
                    passed=tuple(task_id for task_id, p in predictions if p.passed))


def optimize(config: OptimizeConfig, lm: dspy.LM, reflection_lm: dspy.LM | None = None, *, pool: Any = None,
             progress: ProgressHook | None = None) -> SavedProgram:
    """Score the dev tasks with the built-in prompt, optimize on the train tasks, score the dev tasks again.
    Ctrl-C during optimization returns the best program so far (marked interrupted); during the first dev
    evaluation there is nothing to keep and KeyboardInterrupt propagates. Call from outside an event loop."""
    arm = get_arm(config.arm)
    if not config.train_ids:
        raise UserError("no train tasks: pass --train IDS or a fraction")
    owns_pool = pool is None and arm.needs_sandbox
    if owns_pool:
        pool = SandboxPool(size=1)
    tracker = Tracker(progress)
    env = EpisodeEnv({t.id: t for t in config.suite.tasks}, config.arm, pool, tracker, config.timeout_s,
                     config.tool_timeout_s, config.rules)
    trainset, dev = examples(config.suite, config.train_ids), examples(config.suite, config.dev_ids)
    try:
        with dspy.context(lm=lm, adapter=dspy.ChatAdapter(), disable_history=True):
            chosen = plan(config, reflection_lm, tracker)
            if progress is not None:
                progress.planned(chosen.episodes + 2 * len(dev))
            baseline = EpisodeProgram(env, new_program(config.arm, config.rules))
            before = evaluate_dev(baseline, dev)
            tracker.phase = "optimize"
            interrupted = False
            try:
                state = tuned_state(_compile(chosen, baseline, trainset).program)
            except KeyboardInterrupt:
                interrupted = True
                state = _interrupted_state(chosen, tracker, config) or tuned_state(baseline.program)
            tracker.phase = "dev after"
            after = None
            if not interrupted:
                tuned = new_program(config.arm, config.rules)
                tuned.load_state(state)
                try:
                    after = evaluate_dev(EpisodeProgram(env, tuned), dev)
                except KeyboardInterrupt:
                    interrupted = True
    finally:
        if owns_pool:
            asyncio.run(pool.close())
    return SavedProgram(
        arm=config.arm, suite=config.suite.name, model=config.model, optimizer=config.optimizer,
        budget=config.budget, seed=config.seed, train_ids=config.train_ids, dev_ids=config.dev_ids,
        dev_before=before, dev_after=after, interrupted=interrupted, episodes=tracker.optimizer_episodes,
        reflection_model=config.reflection_model if config.optimizer != "bootstrap" else "", state=state,
        scaffold=config.rules,
    )
