"""A run's row from its episode: the token accounting it records."""

from harness.run.row import token_totals
from harness.trace.calls import LMCall


def test_token_totals_fall_back_to_tiktoken_when_the_provider_reports_nothing():
    call = LMCall(messages=[{"role": "user", "content": "hello world"}], output="hi", prompt_tokens=None,
                  completion_tokens=None, reused_prompt_tokens=0, latency_s=0.1, cached=False)
    totals = token_totals([call], None, "provider")
    assert totals.source == "tiktoken:cl100k_base"
    assert totals.prompt == 2 and totals.completion == 1
