"""A failure inside the harness that repeats is a stop, not a column of rows: when an arm's first runs of a
session (the first FIRST_RUNS to finish, or all of them if it has fewer to do) all end in an `internal` error
with the same message (a missing module, a bug), every other run of that arm would end the same way, and its
rows would read as an arm that fails its tasks."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.errors import UserError
from harness.run.records import RunRecord
from harness.trace.trajectory import Trajectory

FIRST_RUNS = 3
Finished = tuple[RunRecord, Trajectory]


def internal_fix(message: str, resume: str) -> str:
    """What to do about a repeated internal error (`resume`: the command that finishes the run): install what is
    missing, or treat it as a bug."""
    if message.startswith("ModuleNotFoundError"):
        return (f"install the missing module (or the harness extra that provides it), then `{resume}`; or start "
                "a run without this arm (--arms)")
    return (f"a bug in the harness or a broken install: reinstall, then `{resume}`; or start a run without this "
            "arm (--arms) and report the error")


@dataclass
class InternalErrorWatch:
    """Holds back an arm's runs while every one so far failed inside the harness the same way: they are stored
    as soon as a run of the arm ends otherwise (or fails another way), and dropped when the arm is stopped, so a
    resumed run does them again. `planned` is the number of runs of each arm this session does."""

    planned: dict[str, int]
    held: dict[str, list[Finished]] = field(default_factory=dict)
    cleared: set[str] = field(default_factory=set)

    def admit(self, record: RunRecord, trajectory: Trajectory, resume: str) -> list[Finished]:
        """The finished runs to store now (none while the arm's first runs all failed alike); a UserError naming
        the arm, the error and the fix once its first runs all did (`resume`: the command that finishes the run)."""
        arm = record.arm
        if arm in self.cleared:
            return [(record, trajectory)]
        held = self.held.setdefault(arm, [])
        held.append((record, trajectory))
        messages = {r.error_message for r, _ in held}
        if record.error_type != "internal" or len(messages) > 1:
            self.cleared.add(arm)
            return self.held.pop(arm)
        first = min(FIRST_RUNS, self.planned.get(arm, FIRST_RUNS))
        if len(held) < first:
            return []
        raise UserError(f"arm {arm}: its first {len(held)} run(s) all failed inside the harness with "
                        f"{record.error_message}; stopped before the rest of the suite (the other arms' rows are "
                        f"kept): {internal_fix(record.error_message, resume)}")
