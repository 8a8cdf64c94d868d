"""The scaffold as an experimental factor: both default arms under `plain` and `guided` on the smoke and held-out
suites, then on the held-out suite under `guided` with each of its rules switched off in turn (set to its
`plain` value). Prints success per arm, tokens per run, turns per configuration, and whether the direction of
the code-mode vs direct difference differs from guided's on the same suite.

    python benchmarks/scaffold_ablation.py                          # the embedded model (slow: hours on 2 cores)
    python benchmarks/scaffold_ablation.py --model openai/gpt-4o-mini
    python benchmarks/scaffold_ablation.py --results results/ablation   # the table of an earlier (partial) run
    python benchmarks/scaffold_ablation.py --smallest               # scripted reference model, one task, seconds

Each configuration is one run named `<suite>-<scaffold>` under --out, so an interrupted ablation continues
where it stopped when run again (finished runs are kept).
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from harness.agents.arms import DEFAULT_ARMS, get_arm
from harness.agents.scaffold import GUIDED, PLAIN, RULE_NAMES, Scaffold
from harness.env import configure_environment
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner, new_pool
from harness.tasks.suite import load_suite
from harness.tasks.task import Suite

SUITES = ("smoke", "heldout")
ABLATED_SUITE = "heldout"


@dataclass(frozen=True)
class Configuration:
    suite: str
    scaffold: Scaffold

    @property
    def run_id(self) -> str:
        return f"{self.suite}-{self.scaffold.name}"


def without(rule: str) -> Scaffold:
    """guided with one rule set to its plain value."""
    return replace(GUIDED, name=f"guided-no-{rule}", **{rule: getattr(PLAIN, rule)})


def configurations(suites: tuple[str, ...] = SUITES, rules: tuple[str, ...] = ()) -> list[Configuration]:
    """plain and guided on every suite, then guided less each rule that differs from plain on the ablated suite
    (`rules`: only these, in this order)."""
    chosen = [Configuration(suite, scaffold) for suite in suites for scaffold in (PLAIN, GUIDED)]
    differing = [rule for rule in RULE_NAMES if getattr(PLAIN, rule) != getattr(GUIDED, rule)]
    unknown = sorted(set(rules) - set(differing))
    if unknown:
        raise SystemExit(f"not a rule that differs between plain and guided: {', '.join(unknown)}")
    ablated = list(rules) or differing
    return chosen + [Configuration(ABLATED_SUITE, without(rule)) for rule in ablated if ABLATED_SUITE in suites]


def smallest(suite: Suite) -> Suite:
    """The suite's first task alone."""
    return replace(suite, tasks=suite.tasks[:1])


async def run_all(chosen: list[Configuration], model: str, out: Path, epochs: int, cache: bool,
                  one_task: bool) -> None:
    """Every configuration in turn, sharing one sandbox pool."""
    arms = DEFAULT_ARMS
    pool = new_pool(1) if any(get_arm(a).needs_sandbox for a in arms) or model == "scripted:reference" else None
    try:
        for config in chosen:
            suite = load_suite(config.suite)
            suite = smallest(suite) if one_task else suite
            print(f"{config.run_id}: {len(suite.tasks)} task(s) x {len(arms)} arm(s) x {epochs} epoch(s)", flush=True)
            run = RunConfig(suite=suite, model=model, arms=arms, epochs=epochs, out_dir=out, run_id=config.run_id,
                            cache="replay" if cache else "off", scaffold=config.scaffold)
            await Runner(run, pool=pool).run()
    finally:
        if pool is not None:
            await pool.close()


def direction(rows: pd.DataFrame) -> str:
    """The sign of code mode's success rate minus direct's ('+', '-' or '=')."""
    rates = rows.groupby("arm")["success"].mean()
    first, second = DEFAULT_ARMS
    difference = rates.get(second, 0.0) - rates.get(first, 0.0)
    return "+" if difference > 1e-9 else "-" if difference < -1e-9 else "="


def table(frame: pd.DataFrame) -> str:
    """One line per configuration and arm; the direction column compares with guided on the same suite."""
    first, second = DEFAULT_ARMS
    lines = [(f"| suite | scaffold | arm | passed | tokens / run | turns / run | {second} vs {first} | "
              "vs guided |"), "|---|---|---|---|---|---|---|---|"]
    guided = {suite: direction(rows) for suite, rows in frame[frame.scaffold == GUIDED.name].groupby("suite")}
    changed = []
    for (suite, scaffold), rows in frame.groupby(["suite", "scaffold"], sort=False):
        sign = direction(rows)
        same = "-" if suite not in guided or scaffold == GUIDED.name else \
            ("same" if sign == guided[suite] else "CHANGED")
        changed += [f"{suite} {scaffold}"] if same == "CHANGED" else []
        for arm, runs in rows.groupby("arm", sort=False):
            lines.append(f"| {suite} | {scaffold} | {arm} | {int(runs.success.sum())}/{len(runs)} | "
                         f"{runs.total_tokens.mean():,.0f} | {runs.turns.mean():.1f} | {sign} | {same} |")
    verdict = f"changed under: {', '.join(changed)}" if changed else "the same under every scaffold run"
    return "\n".join([*lines, "", f"Direction of {second} vs {first} (success), compared with guided: {verdict}."])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="local")
    parser.add_argument("--out", type=Path, default=Path("results/ablation"))
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--no-cache", action="store_true", help="bypass the LM response cache")
    parser.add_argument("--results", type=Path, help="print the table of earlier results instead of running")
    parser.add_argument("--smallest", action="store_true", help="scripted reference model, one task per suite")
    parser.add_argument("--rules", default="", help="comma-separated rules to switch off one at a time, in this "
                        "order (default: every rule that differs between plain and guided)")
    args = parser.parse_args()
    rules = tuple(r for r in args.rules.split(",") if r)
    configure_environment()
    out = args.results or args.out
    if args.results is None:
        if args.smallest:
            args.model, out = "scripted:reference", args.out / "smallest"
        asyncio.run(run_all(configurations(rules=rules), args.model, out, args.epochs, not args.no_cache, args.smallest))
    frame = read_results([out])
    frame = frame[frame.arm.isin(DEFAULT_ARMS)]
    order = {c.run_id: n for n, c in enumerate(configurations())}
    frame = frame.assign(_order=frame.run_id.map(order).fillna(len(order))).sort_values(["_order", "run_id"])
    print(table(frame))


if __name__ == "__main__":
    main()
