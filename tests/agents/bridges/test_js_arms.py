"""The JavaScript code modes' declarations, install check and reference program (no Node needed)."""

from __future__ import annotations

import json

import pytest

from harness.agents.arms import check_arms, get_arm
from harness.agents.bridges.js_install import SETUP_COMMAND, package_versions
from harness.agents.bridges.js_replay import reference_program, replay_diverged
from harness.agents.replay import ReferenceTrace
from harness.errors import UserError

TRACE = ReferenceTrace(answer="27.0", stdout="27.0\n", end_state={},
                       tool_calls=(("search_customers", {"query": "Chen"}), ("list-orders", {"limit": 100})),
                       failed_calls=(False, True))


@pytest.mark.parametrize("arm", ["cloudflare-codemode", "ai-sdk-codemode"])
def test_without_the_npm_packages_the_arm_stops_in_one_line_naming_the_command(arm, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    with pytest.raises(UserError) as raised:
        check_arms((arm,))
    assert SETUP_COMMAND in str(raised.value) and "\n" not in str(raised.value)


def test_the_arms_name_their_pinned_packages_and_add_no_scaffold():
    cloudflare, ai_sdk = get_arm("cloudflare-codemode"), get_arm("ai-sdk-codemode")
    versions = package_versions()
    assert f"@cloudflare/codemode@{versions['@cloudflare/codemode']}" in cloudflare.source
    assert f"workerd@{versions['workerd']}" in cloudflare.source
    assert f"@ai-sdk/code-mode@{versions['@ai-sdk/code-mode']}" in ai_sdk.source
    assert not cloudflare.scaffold_applies and not ai_sdk.scaffold_applies and cloudflare.kind == "command"


def test_the_reference_program_makes_the_traced_calls_in_order_then_returns_the_answer():
    program = reference_program(TRACE, "codemode")
    first, second = program.index('codemode["search_customers"]'), program.index('codemode["list-orders"]')
    assert first < second < program.index('return { answer: "27.0", failed }')
    assert json.dumps({"limit": 100}) in program


def test_a_call_that_failed_only_in_this_run_is_a_divergence():
    assert not replay_diverged(TRACE, '{"answer":"27.0","failed":[1]}')  # failed when traced too
    assert replay_diverged(TRACE, '{"answer":"27.0","failed":[0]}')
    assert not replay_diverged(TRACE, '{"result":{"answer":"27.0","failed":[]}}')
    assert replay_diverged(TRACE, "Code execution failed: boom")  # the program itself failed
