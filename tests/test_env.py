from pathlib import Path

from harness.env import checkout_root


def test_the_package_run_from_this_checkout_knows_its_root():
    assert checkout_root() == Path(__file__).resolve().parent.parent
