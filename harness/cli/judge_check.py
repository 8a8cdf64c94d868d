"""`harness judge-check`: a judge model checked against people's verdicts (a label file), and its bias probes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import typer
from rich.table import Table

from harness.cli.app import app
from harness.cli.app import console as new_console


def _probes(text: str) -> tuple[str, ...]:
    from harness.analysis.judge_probes import PROBES
    from harness.errors import UserError

    if text.strip().lower() == "none":
        return ()
    names = tuple(p.strip() for p in text.split(",") if p.strip())
    unknown = [p for p in names if p not in PROBES]
    if unknown:
        raise UserError(f"--probes: unknown probe '{unknown[0]}' (known: {', '.join(PROBES)}, or none)")
    return names


@app.command("judge-check")
def judge_check(
    labels: Path = typer.Argument(..., help="a label file: people's verdicts on answers (docs/scoring.md)"),
    judge_model: str = typer.Option(..., "--judge-model", envvar="HARNESS_JUDGE_MODEL",
                                    help="the judge to check: any model string (local, a LiteLLM string, "
                                         "scripted:judge)"),
    probes: str = typer.Option("filler,reorder,position,self", "--probes",
                               help="bias probes to run, comma-separated (filler, reorder, position, self), or none"),
    limit: int = typer.Option(None, "--limit", min=1, help="judge at most N items, taken in turn from each task"),
    api_base: str = typer.Option(None, "--api-base", envvar="HARNESS_API_BASE", help="an OpenAI-compatible server"),
    judge_temperature: float = typer.Option(None, "--judge-temperature", min=0.0, max=2.0,
                                            help="sample the judge at this temperature (default: its own, 0); "
                                                 "its verdicts are kept apart from the default's"),
    save: bool = typer.Option(False, "--save", help="keep the measurement beside the label file "
                                                    "(NAME.labels.agreement.json), where reports find it"),
) -> None:
    """Judge every labelled answer and report agreement with people (agreement, Cohen's kappa, Krippendorff's alpha,
    bootstrap intervals, confusion matrix, per category, per claim, between labellers) and the bias probes."""
    from harness.analysis.judge_check import as_json, check_judge, estimate_json, judge_all, subset
    from harness.analysis.judge_probes import DESCRIPTIONS, probe
    from harness.analysis.judge_record import save_check
    from harness.analysis.labels import load_labels
    from harness.run.judge import judge_for, judge_identity

    chosen = _probes(probes)
    loaded = subset(load_labels(labels), limit)
    judge = judge_for(judge_model, api_base, judge_temperature)
    identity = judge_identity(judge_model, judge_temperature)
    console = new_console()
    with console.status(f"judging {len(loaded.items)} answers with {identity}") as status:
        verdicts = judge_all(loaded, judge, identity, progress=status.update)
        check = check_judge(loaded, verdicts, identity)
        results = {}
        for name in chosen:
            status.update(f"probe {name}")
            # self-preference compares the answers' authors with the model, whatever its temperature
            results[name] = probe(name, loaded.items, verdicts, judge, judge_model if name == "self" else identity)
    _print_check(console, check)
    table = Table("probe", "what changed", "items", "flip rate [95% CI]", "to pass", "to fail", "unreadable",
                  "note", title="bias probes")
    for name, r in results.items():
        table.add_row(name, DESCRIPTIONS[name], str(r.n), r.rate.text(percent=True), str(r.to_pass),
                      str(r.to_fail), str(r.unreadable), r.note)
    if results:
        console.print(table)
    if save:
        entry = as_json(check) | {"date": datetime.now(UTC).date().isoformat(), "probes": {
            name: {"n": r.n, "rate": estimate_json(r.rate),
                   "to_pass": r.to_pass, "to_fail": r.to_fail, "unreadable": r.unreadable, "note": r.note}
            for name, r in results.items()}}
        console.print(f"saved: {save_check(labels, identity, entry)}")


def _print_check(console, check) -> None:
    console.print(f"judge {check.judge_model} on {check.items} labelled answers ({check.labels}); "
                  f"{check.unreadable} without a readable verdict, {check.ties} tied among labellers (left out)")
    table = Table("compared", "items", "agreement [95% CI]", "Cohen's kappa [95% CI]", "judge pass / people fail",
                  "judge fail / people pass", title="agreement")
    rows = [("judge vs people", check.overall)] + [(f"  {c}", a) for c, a in check.by_category.items()]
    rows += [(f"judge vs {name}", a) for name, a in check.by_labeller.items()]
    rows += [("judge vs people, per claim", check.claims)] if check.claims else []
    rows += [(f"people: {pair}", a) for pair, a in check.humans.items()]
    for label, a in rows:
        if a is None:
            continue
        table.add_row(label, str(a.n), a.agreement.text(percent=True), a.kappa.text(), str(a.matrix.false_pass),
                      str(a.matrix.false_fail))
    console.print(table)
    if check.overall is not None:
        m = check.overall.matrix
        console.print(f"confusion (judge x people): both pass {m.both_pass}, judge pass/people fail {m.false_pass}, "
                      f"judge fail/people pass {m.false_fail}, both fail {m.both_fail}")
    if check.alpha_humans is not None:
        console.print(f"Krippendorff's alpha among labellers {check.alpha_humans.text()}; with the judge as one more "
                      f"{check.alpha_with_judge.text() if check.alpha_with_judge else 'undefined'}")
