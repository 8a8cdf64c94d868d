"""The noisy scripted model: its options, its draws' rates, and which replay each run gets."""

import asyncio

import pytest

from harness.analysis.stats import wilson
from harness.errors import UserError
from harness.models import resolve_model
from harness.models.cost import pricing_for
from harness.models.engine import CallRecorder
from harness.models.families import NOISY, family_of
from harness.models.noisy import GIVE_UP_ANSWER, GIVE_UP_SUFFIX, Mixture, parse_noisy
from harness.tasks.task import Task

Z999 = 3.29  # 99.9% intervals: the draws are seeded, so a check holds every time or never
from harness.trace.transcript import Transcript


def test_options_parse():
    spec = parse_noisy("scripted:noisy:p=0.5@0.95+0.3@0.6+0.2@0.1,seed=3,task-seed=2,shift.codemode=-0.1,"
                       "p.direct=0.7,task.t1=20%")
    assert spec.base == Mixture(((0.5, 0.95), (0.3, 0.6), (0.2, 0.1))) and spec.base.mean == pytest.approx(0.675)
    assert (spec.seed, spec.task_seed, spec.shifts, spec.tasks) == (3, 2, {"codemode": -0.1}, {"t1": 0.2})
    assert spec.arms == {"direct": Mixture(((1.0, 0.7),))}
    assert spec.chance("t1", "codemode") == pytest.approx(0.1) and spec.chance("t2", "direct") == 0.7
    assert family_of("scripted:noisy:p=0.5") is NOISY and family_of("scripted:noisy") is NOISY


@pytest.mark.parametrize("model, fragment", [
    ("scripted:noisy", "give the noisy model a success chance, e.g. scripted:noisy:p=0.7,seed=1"),
    ("scripted:noisy:seed=2", "give p=CHANCE"),
    ("scripted:noisy:p=high", "p=high is not a number"),
    ("scripted:noisy:p=1.5", "p=1.5 must be between 0 and 1"),
    ("scripted:noisy:p=0.5@0.9+0.4@0.1", "add up to 0.9, not 1"),
    ("scripted:noisy:p=0.5,colour=red", "unknown option 'colour'"),
    ("scripted:noisy:p=0.5,seed=x", "seed=x is not a whole number"),
    ("scripted:noisy:p", "option 'p' is not NAME=VALUE"),
])
def test_bad_options_are_one_line_user_errors_naming_the_model(model, fragment):
    with pytest.raises(UserError, match=fragment):
        resolve_model(model)


def test_each_rate_holds_within_its_binomial_interval_over_many_draws():
    spec = parse_noisy("scripted:noisy:p=0.3,shift.codemode=0.4,seed=7")
    for arm, chance in (("direct", 0.3), ("codemode", 0.7)):
        wins = sum(spec.succeeds(f"t{t}", arm, f"epoch={e}") for t in range(200) for e in range(10))
        rate = wilson(wins, 2000, Z999)
        assert rate.low <= chance <= rate.high


def test_a_mixture_gives_its_shares_of_tasks_their_chances_the_same_in_every_seed():
    spec = parse_noisy("scripted:noisy:p=0.5@0.95+0.3@0.6+0.2@0.1,seed=1")
    chances = [spec.chance(f"t{t}", "direct") for t in range(1000)]
    for share, chance in ((0.5, 0.95), (0.3, 0.6), (0.2, 0.1)):
        rate = wilson(sum(c == chance for c in chances), len(chances), Z999)
        assert rate.low <= share <= rate.high
    other = parse_noisy("scripted:noisy:p=0.5@0.95+0.3@0.6+0.2@0.1,seed=2")
    assert [other.chance(f"t{t}", "direct") for t in range(1000)] == chances  # the agent's strengths stay


def test_seeds_and_epochs_draw_independently_and_a_seed_reproduces():
    one, two = parse_noisy("scripted:noisy:p=0.5,seed=1"), parse_noisy("scripted:noisy:p=0.5,seed=2")
    draws = [one.succeeds(f"t{t}", "direct", "epoch=0") for t in range(400)]
    assert draws == [one.succeeds(f"t{t}", "direct", "epoch=0") for t in range(400)]
    differ = sum(d != two.succeeds(f"t{t}", "direct", "epoch=0") for t, d in enumerate(draws))
    epochs = sum(d != one.succeeds(f"t{t}", "direct", "epoch=1") for t, d in enumerate(draws))
    for count in (differ, epochs):  # independent draws at 0.5 disagree half the time
        rate = wilson(count, 400, Z999)
        assert rate.low <= 0.5 <= rate.high


def test_a_run_that_succeeds_replays_the_reference_and_one_that_fails_gives_up():
    asked = []

    async def policies(task, arm, sample=None):
        asked.append((task.id, task.reference))
        return lambda request: "done"

    provider = resolve_model("scripted:noisy:p=0.5,task.always=1,task.never=0", reference_policies=policies)
    task = Task(id="always", prompt="?", expected="x", reference="print('x')")
    recorder = CallRecorder(Transcript(), cache_scope="epoch=0")
    asyncio.run(provider.lm_for(task, "direct", recorder))
    asyncio.run(provider.lm_for(Task(id="never", prompt="?", expected="x", reference="print('x')"), "direct", recorder))
    assert asked == [("always", "print('x')"), ("never" + GIVE_UP_SUFFIX, f"print({GIVE_UP_ANSWER!r})")]


def test_its_rows_say_the_outcome_was_simulated():
    assert pricing_for("scripted:noisy:p=0.5").source.startswith("simulated: scripted:noisy draws each run's success")
