"""A suite declaring catalogue_sizes: each task made once per size (id, servers' size, metadata), the sizes chosen
instead of the suite's own, and every other suite refusing a size in one line."""

import pytest

from harness.errors import UserError
from harness.tasks.registry import load_suite


def test_the_catalogue_suite_makes_each_task_once_per_declared_size():
    suite = load_suite("catalogue")
    assert suite.catalogue_sizes == (16, 64, 256, 1024)
    assert len(suite.tasks) == 5 * 4
    task = next(t for t in suite.tasks if t.id == "ticket-account-owner-256")
    assert task.catalogue_size == 256 and task.data_size is None
    assert {s.size for s in task.servers} == {256} and len(task.servers) == 8


def test_chosen_sizes_replace_the_suites_own_and_change_the_task_hash():
    suite = load_suite("catalogue", (16, 100))
    assert [t.id for t in suite.tasks][:2] == ["account-billing-email-16", "ticket-account-owner-16"]
    assert {t.catalogue_size for t in suite.tasks} == {16, 100}
    first, second = (next(t for t in suite.tasks if t.id == f"account-billing-email-{n}") for n in (16, 100))
    assert first.content_hash != second.content_hash


def test_a_suite_without_catalogue_sizes_refuses_one():
    with pytest.raises(UserError, match="suite 'core' .* takes no catalogue size"):
        load_suite("core", (16,))


def test_repeated_sizes_are_refused():
    with pytest.raises(UserError, match="--catalogue-size: sizes are distinct whole numbers"):
        load_suite("catalogue", (16, 16))
