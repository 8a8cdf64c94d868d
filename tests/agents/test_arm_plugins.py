"""`harness.register_arm` forwards to the arms registry's own `register_arm`, or says in one line that there is none."""

import pytest

import harness
from harness.agents import arms
from harness.errors import UserError


def test_an_arm_goes_to_the_arms_registrys_register_arm(monkeypatch):
    received = []
    monkeypatch.setattr(arms, "register_arm", received.append, raising=False)
    harness.register_arm("my-arm")
    assert received == ["my-arm"]


def test_without_one_registering_an_arm_is_a_user_error(monkeypatch):
    monkeypatch.delattr(arms, "register_arm", raising=False)
    with pytest.raises(UserError, match="cannot register an arm from outside the package yet"):
        harness.register_arm("my-arm")
