"""What changes a judge's agreement with people: the same labelled answers judged under variants of the judging,
side by side in one run, each compared with the labels and with the default judging's verdicts.

Variants (`--variants`, all by default):
- `default`: the suite's scorers as written, the judge at its own temperature (0);
- `temperature`: the same, the judge sampled at `--temperature` (0.7 by default);
- `claims-as-rubric`: each claims task's claims handed to a pass/fail rubric instead ("states at least K of these N
  facts", K the claims threshold's share rounded up), so the judge gives one verdict instead of one per claim;
- `reworded`: each rubric task's criteria in other words with the same meaning (REWORDED below: written by hand,
  per task of the `open` suite; a task without a rewording keeps its criteria and is left out of this variant).

Usage: .venv/bin/python benchmarks/judge_variants.py --judge-model local --limit 24 [--variants ...]
       (the embedded model: run it under flock /tmp/harness-embedded.lock; ~20 s a judge call on this machine)
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.analysis.judge_check import Verdict, check_judge, judge_all, subset
from harness.analysis.labels import LabelFile, LabelledAnswer, load_labels
from harness.run.judge import judge_for, judge_identity
from harness.tasks.judge_scorers import Claims, Rubric, numbered
from harness.tasks.task import ScorerSpec

VARIANTS = ("default", "temperature", "claims-as-rubric", "reworded")

# Criteria of the open suite's rubric tasks in other words, meaning the same (the measurement's input, not a rule).
REWORDED = {
    "upgrade-candidate": "The recommended customer must be Goran Tanaka (C-0020). The reason given must be that, of "
                         "the active customers on the free tier, his shipped orders add up to the highest value "
                         "(992 USD).",
    "ticket-status-overview": "Gives the ticket counts by status: open 17, in progress 13, closed 10; 40 in total.",
    "ticket-to-prioritise": "Picks a single open ticket whose customer is on the enterprise tier, gives its ticket id "
                            "and its customer, and explains the pick by priority first and age second.",
    "history-checked": "Says T-1001 moved open -> in_progress -> closed and who made each move according to the "
                       "ticket history; the tool calls must show that the history was fetched (retrying after a "
                       "503 error is acceptable).",
}


def claims_as_rubric(item: LabelledAnswer) -> LabelledAnswer | None:
    """A claims item judged by a pass/fail rubric listing the same claims with the same pass line."""
    scorer = item.scorer
    if not isinstance(scorer, Claims):
        return None
    claims = [str(c) for c in item.task.expected]
    needed = math.ceil(scorer.threshold * len(claims) - 1e-9)
    criteria = (f"States at least {needed} of these {len(claims)} facts (a fact stated wrongly, contradicted or left "
                f"out does not count):\n{numbered(claims)}")
    args = {"criteria": criteria, "show_calls": scorer.show_calls, "answer_position": scorer.answer_position}
    task = replace(item.task, scorer=ScorerSpec("rubric", tuple(sorted(args.items()))))
    return replace(item, task=task, claims={})


def reworded(item: LabelledAnswer) -> LabelledAnswer | None:
    """A rubric item with its criteria in REWORDED's words (None: no rewording for its task)."""
    if not isinstance(item.scorer, Rubric) or item.task.id not in REWORDED:
        return None
    args = dict(item.task.scorer.args) | {"criteria": REWORDED[item.task.id]}
    return replace(item, task=replace(item.task, scorer=ScorerSpec("rubric", tuple(sorted(args.items())))))


def variant_items(name: str, labels: LabelFile) -> LabelFile:
    """The label file's items as judged under variant `name` (items it does not apply to left out)."""
    change = {"claims-as-rubric": claims_as_rubric, "reworded": reworded}.get(name)
    if change is None:
        return labels
    return replace(labels, items=tuple(changed for item in labels.items if (changed := change(item)) is not None))


def flips(verdicts: dict[str, Verdict], base: dict[str, Verdict]) -> tuple[int, int]:
    """(verdicts that differ from the default judging's, items both read) over the items both judged."""
    both = [(v.passed, base[i].passed) for i, v in verdicts.items()
            if i in base and v.passed is not None and base[i].passed is not None]
    return sum(a != b for a, b in both), len(both)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", default=str(Path(__file__).resolve().parent.parent / "tasks/labels/open.yaml"))
    parser.add_argument("--judge-model", default=None)
    parser.add_argument("--api-base", default=None)
    parser.add_argument("--limit", type=int, default=None, help="items taken in turn from each task")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--smallest", action="store_true", help="scripted:judge on 8 items (tests/test_benchmarks)")
    args = parser.parse_args()
    if args.smallest:
        args.judge_model, args.limit = "scripted:judge", 8
    if not args.judge_model:
        parser.error("--judge-model is required (e.g. local, or scripted:judge)")
    chosen = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant {unknown[0]!r} (known: {', '.join(VARIANTS)})")
    labels = subset(load_labels(Path(args.labels)), args.limit)
    default_judge = judge_for(args.judge_model, args.api_base)
    base = judge_all(labels, default_judge, args.judge_model)
    print(f"judge {args.judge_model}, {len(labels.items)} labelled answers from {args.labels}")
    print(f"{'variant':<18}{'items':>6}  {'agreement [95% CI]':<22}{'kappa [95% CI]':<24}"
          f"{'false pass':>11}{'false fail':>11}{'unreadable':>11}  flips vs default")
    for name in chosen:
        items = variant_items(name, labels)
        if name == "temperature":
            identity = judge_identity(args.judge_model, args.temperature)
            verdicts = judge_all(items, judge_for(args.judge_model, args.api_base, args.temperature), identity)
        else:
            identity = args.judge_model
            verdicts = base if name == "default" else judge_all(items, default_judge, identity)
        check = check_judge(items, verdicts, identity)
        changed, compared = flips(verdicts, base)
        overall = check.overall
        agreement = overall.agreement.text(percent=True) if overall else "-"
        kappa = overall.kappa.text() if overall else "-"
        false_pass = overall.matrix.false_pass if overall else 0
        false_fail = overall.matrix.false_fail if overall else 0
        print(f"{name:<18}{check.items:>6}  {agreement:<22}{kappa:<24}{false_pass:>11}{false_fail:>11}"
              f"{check.unreadable:>11}  {changed}/{compared}")


if __name__ == "__main__":
    main()
