"""The gate's false alarms and power, measured: simulated A/A pairs (a baseline and a candidate drawn from the same
noisy agent) and pairs whose candidate is truly worse, judged by the real gate code (harness.analysis.simulate).

The agent is the issue's: half the tasks solved 95% of the time, 30% at 60%, 20% at 10% (about 23% of tasks flip
between two runs). Prints, at 1 and 3 epochs: the false-alarm rate of the gate's rule (significant-drop, alpha
0.05; must be within alpha + 2 points) beside the older measured-drop rule, the drop the gate says it can detect,
and how often it fails against true drops of 5, 10 and 20 points and of the stated detectable drop (80% +- 5).
A true drop is the mean over tasks of the chance lost (a shift found so that chances clipped at 0 still lose it).
Usage: .venv/bin/python benchmarks/gate_noise.py [--pairs 1000] [--power-pairs 400] [--tasks 35]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.analysis.gate import GateRule
from harness.analysis.simulate import ARM, gate_trials
from harness.models.noisy import NoisySpec, parse_noisy

AGENT = "scripted:noisy:p=0.5@0.95+0.3@0.6+0.2@0.1"
ALPHA, MAX_DROP = 0.05, 0.05


def shift_for(spec: NoisySpec, tasks: int, drop: float) -> float:
    """The shift whose clipped chances lose `drop` on average over the tasks (bisection)."""
    def lost(shift: float) -> float:
        shifted = replace(spec, shifts={ARM: -shift})
        return sum(spec.chance(f"task-{t:04d}", ARM) - shifted.chance(f"task-{t:04d}", ARM) for t in range(tasks)) / tasks

    low, high = drop, 1.0
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (middle, high) if lost(middle) < drop else (low, middle)
    return high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000, help="A/A pairs per setting")
    parser.add_argument("--power-pairs", type=int, default=400, help="pairs per true drop")
    parser.add_argument("--tasks", type=int, default=35)
    parser.add_argument("--smallest", action="store_true", help="30 A/A pairs, 20 per drop, 20 tasks (seconds)")
    args = parser.parse_args()
    if args.smallest:
        args.pairs, args.power_pairs, args.tasks = 30, 20, 20
    spec = parse_noisy(AGENT)
    rule, older = GateRule(MAX_DROP, ALPHA), GateRule(MAX_DROP, ALPHA, rule="measured-drop")
    started = time.perf_counter()
    print(f"agent {AGENT}, {args.tasks} tasks, --max-drop {MAX_DROP}, --alpha {ALPHA}; "
          f"{args.pairs} A/A pairs and {args.power_pairs} pairs per drop per epoch count")
    print("| epochs | false alarms: significant-drop | measured-drop (older rule) | stated detectable drop |")
    print("|---|---|---|---|")
    stated: dict[int, float] = {}
    for epochs in (1, 3):
        aa = gate_trials(spec, args.tasks, epochs, args.pairs, rule)
        old = gate_trials(spec, args.tasks, epochs, args.pairs, older)
        stated[epochs] = aa.mean_detectable
        verdict = "ok" if aa.failure_rate <= ALPHA + 0.02 else "ABOVE alpha + 2 points"
        print(f"| {epochs} | {aa.failure_rate:.1%} ({aa.failures}/{aa.pairs}, {verdict}) | {old.failure_rate:.1%} "
              f"({old.failures}/{old.pairs}) | {aa.mean_detectable * 100:.1f} points |")
    print()
    print("| epochs | true drop | gate failed (power) | note |")
    print("|---|---|---|---|")
    for epochs in (1, 3):
        for drop in (0.05, 0.10, 0.20, stated[epochs]):
            shifted = replace(spec, shifts={ARM: 0.0})
            shift = shift_for(shifted, args.tasks, drop)
            found = gate_trials(replace(spec, shifts={}), args.tasks, epochs, args.power_pairs, rule, drop=shift,
                                first_seed=1_000_000 + int(drop * 1000) * 10_000)
            note = ""
            if drop == stated[epochs]:
                close = abs(found.failure_rate - 0.8) <= 0.05
                note = f"the stated detectable drop: {'within' if close else 'OUTSIDE'} 80% +- 5 points"
            print(f"| {epochs} | {found.true_drop * 100:.1f} points | {found.failure_rate:.1%} "
                  f"({found.failures}/{found.pairs}) | {note} |")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
