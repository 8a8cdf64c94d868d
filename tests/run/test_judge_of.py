"""A scorer's judge (harness.run.episode.judge_of): one LM call with the judge's messages, at a chosen temperature."""

from __future__ import annotations

from harness.run.episode import judge_of


class RecordingLM:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    def __call__(self, messages: list[dict], **kwargs: object) -> list[dict]:
        self.calls.append({"messages": messages, **kwargs})
        return [{"text": "PASS"}]


def test_the_judge_sends_system_and_user_and_returns_the_reply_text():
    lm = RecordingLM()
    assert judge_of(lm)("be strict", "the answer") == "PASS"
    assert lm.calls == [{"messages": [{"role": "system", "content": "be strict"},
                                      {"role": "user", "content": "the answer"}]}]


def test_a_chosen_temperature_is_sent_with_every_judge_call():
    lm = RecordingLM()
    judge_of(lm, temperature=0.7)("s", "u")
    assert lm.calls[0]["temperature"] == 0.7


async def test_a_judge_outside_a_run_is_built_for_a_real_model_string_without_a_response_cache():
    from harness.run.judge import open_judge

    # a real model's provider (no call is made here); its verdicts are cached by the judge's own verdict cache
    judge = await open_judge("openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1")
    assert callable(judge)
