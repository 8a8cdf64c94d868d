"""Label files: people's verdicts on answers to a judged suite's tasks, to check a judge against (`harness
judge-check`). YAML, read through pydantic (extra="forbid"); every problem is one line naming the file, the item
and the field.

    suite: open                       # the suite whose tasks the answers answer (a name or a path)
    results: results/open/r1.parquet  # optional: where `sample` items are read (relative to this file)
    items:
      - task: customer-profile
        answer: "The customer is ..."   # or  sample: SAMPLE_ID  (a row of `results`: its answer and tool calls)
        tool_calls: [{tool: get_customer, arguments: {customer_id: C-0001}, result: "..."}]  # optional, with answer
        source: hand:good               # who wrote the answer: a model string, or hand:good|partial|wrong
        labels: {ab: pass}              # labeller -> pass | fail | a score from 0 to 1
        claims: {ab: [true, true, false, true, true]}   # optional: labeller -> covered or not, per claim

A score label passes at the task's own threshold (a `claims` or `rubric: {scale: score}` task's `threshold`; 0.5
for a pass/fail rubric), so people and the judge are held to the same line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import UserError, describe_error, read_user_file
from harness.tasks.judge_scorers import Claims, Rubric
from harness.tasks.registry import load_suite
from harness.tasks.scorers import Scorer, build_scorer
from harness.tasks.task import Suite, Task
from harness.trace.calls import ToolCallRecord

Label = Literal["pass", "fail"] | float


class _Call(BaseModel):
    """A tool call written into a label file beside its answer (what a trajectory rubric shows the judge)."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    arguments: dict[str, Any] = {}
    result: str = ""
    is_error: bool = False


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, min_length=1)
    task: str = Field(min_length=1)
    answer: str | None = None
    tool_calls: list[_Call] | None = None
    sample: str | None = Field(default=None, min_length=1)
    source: str = Field(default="unknown", min_length=1)
    labels: dict[str, Label] = Field(min_length=1)
    claims: dict[str, list[bool]] = {}


class _LabelFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    suite: str = Field(min_length=1)
    results: str | None = None
    items: list[dict] = Field(min_length=1)


@dataclass(frozen=True)
class LabelledAnswer:
    """One answer with its labellers' verdicts (labeller -> passed), and per-claim verdicts where given."""

    id: str
    task: Task
    answer: str
    source: str
    labels: dict[str, bool]
    claims: dict[str, tuple[bool, ...]] = field(default_factory=dict)
    tool_calls: tuple[ToolCallRecord, ...] = ()

    @property
    def scorer(self) -> Scorer:
        return build_scorer(self.task.scorer)

    def human(self) -> bool | None:
        """The people's verdict: the majority of the labellers; None on a tie (left out of the judge's agreement)."""
        passes = sum(self.labels.values())
        fails = len(self.labels) - passes
        return None if passes == fails else passes > fails


@dataclass(frozen=True)
class LabelFile:
    path: Path
    suite: Suite
    items: tuple[LabelledAnswer, ...]

    @property
    def labellers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(name for item in self.items for name in item.labels))


def pass_line(scorer: Scorer) -> float:
    """Where a 0-1 score label passes for this scorer (its own threshold)."""
    if isinstance(scorer, Claims) or (isinstance(scorer, Rubric) and scorer.scale == "score"):
        return scorer.threshold
    return 0.5


def _verdict(label: Label, line: float) -> bool:
    if isinstance(label, str):
        return label == "pass"
    if not 0 <= label <= 1:
        raise ValueError(f"a score label is from 0 to 1, not {label}")
    return label >= line


def _samples(results: Path, label_path: Path) -> dict[str, tuple[str, tuple[ToolCallRecord, ...]]]:
    """sample id -> (answer, tool calls) of every row of a results file."""
    from harness.run.records import read_results, read_trajectory

    if not results.is_file():
        raise UserError(f"{label_path}: field 'results': no results file {results}")
    rows = read_results([results])
    return {row.sample_id: (row.answer, tuple(read_trajectory(results, row.sample_id).tool_calls))
            for row in rows.itertuples()}


def _item(raw: object, index: int, suite: Suite, path: Path, samples) -> LabelledAnswer:
    label = f"item '{raw.get('id')}'" if isinstance(raw, dict) and raw.get("id") else f"item #{index + 1}"
    try:
        model = _Item.model_validate(raw)
    except ValidationError as exc:
        raise UserError(f"{path}: {label}: {describe_error(exc)}") from None
    tasks = {t.id: t for t in suite.tasks}
    if model.task not in tasks:
        raise UserError(f"{path}: {label}: field 'task': suite '{suite.name}' has no task '{model.task}'")
    task = tasks[model.task]
    scorer = build_scorer(task.scorer)
    if not isinstance(scorer, (Rubric, Claims)):
        raise UserError(f"{path}: {label}: field 'task': task '{task.id}' is scored by '{scorer.name}', not by a "
                        "judge (rubric or claims)")
    if (model.answer is None) == (model.sample is None):
        raise UserError(f"{path}: {label}: give either 'answer' (the text) or 'sample' (a run's sample id)")
    if model.sample is not None and model.tool_calls is not None:
        raise UserError(f"{path}: {label}: field 'tool_calls': a 'sample' item's calls are its run's; give them "
                        "only with 'answer'")
    calls = tuple(ToolCallRecord(tool=c.tool, arguments=c.arguments, result_preview=c.result,
                                 result_chars=len(c.result), is_error=c.is_error) for c in model.tool_calls or ())
    answer = model.answer
    if model.sample is not None:
        if samples is None:
            raise UserError(f"{path}: {label}: field 'sample': the file names no 'results' to read it from")
        if model.sample not in samples:
            raise UserError(f"{path}: {label}: field 'sample': no sample '{model.sample}' in the results file")
        answer, calls = samples[model.sample]
    try:
        labels = {name: _verdict(value, pass_line(scorer)) for name, value in model.labels.items()}
    except ValueError as exc:
        raise UserError(f"{path}: {label}: field 'labels': {exc}") from None
    count = len(task.expected) if isinstance(scorer, Claims) else 0
    for name, verdicts in model.claims.items():
        if not count:
            raise UserError(f"{path}: {label}: field 'claims': task '{task.id}' has no claims (a rubric task)")
        if len(verdicts) != count:
            raise UserError(f"{path}: {label}: field 'claims': labeller '{name}' gave {len(verdicts)} verdicts "
                            f"for {count} claims")
    return LabelledAnswer(id=model.id or f"{task.id}#{index + 1}", task=task, answer=answer or "",
                          source=model.source, labels=labels,
                          claims={k: tuple(v) for k, v in model.claims.items()}, tool_calls=calls)


def _yaml(path: Path) -> object:
    try:
        return yaml.safe_load(read_user_file(path, "label file"))
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise UserError(f"{path}: malformed YAML{'' if line is None else f' at line {line + 1}'}") from None


def load_labels(path: str | Path) -> LabelFile:
    """A label file, checked whole before any judge is asked (one-line errors naming file, item, field)."""
    path = Path(path)
    try:
        header = _LabelFile.model_validate(_yaml(path))
    except ValidationError as exc:
        raise UserError(f"{path}: {describe_error(exc)}") from None
    suite_path = path.parent / header.suite
    suite = load_suite(str(suite_path) if suite_path.suffix in (".yaml", ".yml") else header.suite)
    samples = _samples(path.parent / header.results, path) if header.results else None
    items = tuple(_item(raw, i, suite, path, samples) for i, raw in enumerate(header.items))
    ids = [item.id for item in items]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate:
        raise UserError(f"{path}: item '{duplicate}': field 'id': duplicate item id")
    return LabelFile(path, suite, items)
