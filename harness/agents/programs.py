"""Saved programs: the tuned predictors an optimizer produced, as JSON, with what produced them.

The file holds the arm's step predictor's DSPy state (instructions and demos; see harness.agents.arms), its
content hash, which `harness run --program` writes into every row's `program_hash`, so reports can tell tuned
runs from the built-in prompt, and the scaffold it was tuned under, which `run --program` runs it with. The hash
is computed from the state when the file is loaded: a hand-edited program is a different program.
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import dspy
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.agents.arms import ARM_NAMES, get_arm
from harness.agents.scaffold import GUIDED, Scaffold, scaffold_from_dict
from harness.errors import UserError, describe_error, read_user_file
from harness.files import atomic_write_text
from harness.hashing import content_hash
from harness.version import __version__

FORMAT = "harness-program"
# 2: every arm is one step predictor in the shared loop (version 1 held a separate extract step, which no arm
# has any more: a version-1 state cannot run, so it is refused with a hint to tune again).
# 3: the scaffold the program was tuned under (a version-2 file was tuned under the rules `guided` names).
FORMAT_VERSION = 3
TUNABLE_ARMS: tuple[str, ...] = ARM_NAMES


@dataclass(frozen=True)
class DevScore:
    """How a program did on the held-out dev tasks: the suite's own scorers, one episode per task."""

    success_rate: float
    mean_score: float
    passed: tuple[str, ...]  # dev task ids that passed


@dataclass(frozen=True)
class SavedProgram:
    arm: str
    suite: str
    model: str
    optimizer: str
    budget: int
    seed: int
    train_ids: tuple[str, ...]
    dev_ids: tuple[str, ...]
    dev_before: DevScore | None
    dev_after: DevScore | None
    interrupted: bool  # stopped early: the best program found so far, dev_after not measured
    episodes: int  # episodes the optimizer ran (dev evaluations not included)
    reflection_model: str = ""
    harness_version: str = ""
    created_at: str = ""
    state: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    scaffold: Scaffold = GUIDED  # the rules it was tuned under; `run --program` runs it under them

    @property
    def hash(self) -> str:
        return program_hash(self.state)


def program_hash(state: dict[str, Any]) -> str:
    """Content hash of a tuned state (16 hex digits of sha256 over canonical JSON)."""
    return content_hash(state)


def tuned_state(module: dspy.Module) -> dict[str, Any]:
    """A module's predictor state without any LM bound to it (optimizers such as SIMBA set one per
    candidate; a saved program must run on whatever model `harness run` is given)."""
    state = {}
    for name, parameter in module.named_parameters():
        unbound = copy.copy(parameter)  # dumping a bound LM would try to serialize its engine
        unbound.lm = None
        state[name] = unbound.dump_state()
    return state


def new_program(arm: str, scaffold: Scaffold) -> dspy.Module:
    """The arm's tunable module with the built-in prompt under `scaffold`: what optimizers start from and saved
    states load into. An arm with no program of the harness's (an agent from outside, measured as its own docs
    build it) cannot be tuned: one line saying so."""
    build = get_arm(arm).new_program
    if build is None:
        raise UserError(f"arm '{arm}' has no program of the harness's to tune or load (an agent from outside the "
                        "package runs as its own code builds it)")
    return build(scaffold)


def _check_fields(arm: str, state: dict[str, Any]) -> None:
    """Every arm's predictor is called `step`; its signature's fields say which arm a state was tuned for."""
    def prefixes(predictor_state: dict[str, Any]) -> list[str]:
        return [f["prefix"] for f in predictor_state["signature"]["fields"]]

    built = tuned_state(new_program(arm, GUIDED))  # the fields are the same under every scaffold
    if set(state) != set(built):
        raise ValueError(f"predictors {sorted(state)}, expected {sorted(built)}")
    for name, predictor in built.items():
        if prefixes(state[name]) != prefixes(predictor):
            raise ValueError(f"{name} has the fields {prefixes(state[name])}, expected {prefixes(predictor)}")


# ---- file boundary (pydantic, extra="forbid") ----

class _DevScoreModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    success_rate: float = Field(ge=0, le=1)
    mean_score: float
    passed: list[str]


class _ProgramFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["harness-program"]
    format_version: Literal[2, 3]
    hash: str
    arm: Literal[ARM_NAMES]  # type: ignore[valid-type]
    suite: str
    model: str
    optimizer: str
    budget: int = Field(ge=0)
    seed: int
    train_ids: list[str]
    dev_ids: list[str]
    dev_before: _DevScoreModel | None
    dev_after: _DevScoreModel | None
    interrupted: bool
    episodes: int = Field(ge=0)
    reflection_model: str
    harness_version: str
    created_at: str
    state: dict[str, Any]
    scaffold: dict[str, Any] | None = None  # absent from version 2 (tuned under guided's rules)


def _dev(score: DevScore | None) -> dict[str, Any] | None:
    return None if score is None else {**asdict(score), "passed": list(score.passed)}


def save_program(program: SavedProgram, path: Path) -> Path:
    """Write the program as JSON (atomically: an interrupted save leaves no half file)."""
    data = {"format": FORMAT, "format_version": FORMAT_VERSION, "hash": program.hash, "arm": program.arm,
            "suite": program.suite, "model": program.model, "optimizer": program.optimizer, "budget": program.budget,
            "seed": program.seed, "train_ids": list(program.train_ids), "dev_ids": list(program.dev_ids),
            "dev_before": _dev(program.dev_before), "dev_after": _dev(program.dev_after),
            "interrupted": program.interrupted, "episodes": program.episodes,
            "reflection_model": program.reflection_model,
            "harness_version": program.harness_version or __version__,
            "created_at": program.created_at or datetime.now(UTC).isoformat(timespec="seconds"),
            "state": program.state, "scaffold": asdict(program.scaffold)}
    _ProgramFile.model_validate(data)  # what is written can be read back
    atomic_write_text(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return path


def load_program(path: Path) -> SavedProgram:
    """A saved program, validated: a file that is not one (or whose state does not fit its arm) is a UserError."""
    text = read_user_file(path, "program file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not a harness program (not JSON: {exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"{path}: not a harness program (write one with `harness optimize ... --out {path.name}`)")
    if data.get("format_version") == 1:
        raise UserError(f"{path}: a program saved by an older harness, whose arms ended with a separate extract "
                        "step; tune it again with `harness optimize`")
    try:
        model = _ProgramFile.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{path}: bad harness program: {describe_error(exc, data)}") from None
    scaffold = GUIDED if model.scaffold is None else scaffold_from_dict(model.scaffold)
    try:
        _check_fields(model.arm, model.state)
        new_program(model.arm, scaffold).load_state(model.state)
    except Exception as exc:  # noqa: BLE001 - any mismatch between the state and the arm's predictors
        raise UserError(f"{path}: its state does not fit the {model.arm} arm's predictors "
                        f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None

    def dev(score: _DevScoreModel | None) -> DevScore | None:
        return None if score is None else DevScore(score.success_rate, score.mean_score, tuple(score.passed))

    return SavedProgram(
        arm=model.arm, suite=model.suite, model=model.model, optimizer=model.optimizer, budget=model.budget,
        seed=model.seed, train_ids=tuple(model.train_ids), dev_ids=tuple(model.dev_ids),
        dev_before=dev(model.dev_before), dev_after=dev(model.dev_after), interrupted=model.interrupted,
        episodes=model.episodes, reflection_model=model.reflection_model, harness_version=model.harness_version,
        created_at=model.created_at, state=model.state, scaffold=scaffold,
    )
