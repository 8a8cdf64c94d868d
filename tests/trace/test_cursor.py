"""The step cursor: a run's calls see the step in progress; outside a run nothing is stamped."""

from harness.trace.cursor import begin_step, current_cursor, current_step, stepping


def test_a_run_sees_the_step_the_loop_began():
    with stepping() as cursor:
        begin_step(2)
        assert current_step() == 2 and current_cursor() is cursor


def test_outside_a_run_no_step_is_set():
    begin_step(3)
    assert current_step() is None and current_cursor().index is None


def test_each_run_has_its_own_cursor():
    with stepping():
        begin_step(1)
        with stepping():
            assert current_step() is None
        assert current_step() == 1
