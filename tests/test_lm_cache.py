from dspy.lm15 import Message, Request, Usage

from harness.lm_cache import CachingEngine, cache_scope, was_cache_hit
from harness.models import response_text, text_response


class CountingEngine:
    model_id = "fake/model"

    def __init__(self):
        self.calls = 0

    def complete(self, request):
        self.calls += 1
        return text_response(f"reply {self.calls}", self.model_id, Usage(input_tokens=5, output_tokens=2))


def request(text: str, temperature: float = 0.0) -> Request:
    from dspy.lm15 import Config

    return Request(model="fake/model", messages=(Message.user(text),), config=Config(temperature=temperature))


def test_identical_request_is_served_from_disk(tmp_path):
    inner = CountingEngine()
    engine = CachingEngine(inner, tmp_path)
    first = engine.complete(request("hello"))
    second = CachingEngine(CountingEngine(), tmp_path).complete(request("hello"))  # another process, same dir
    assert not was_cache_hit(first) and was_cache_hit(second)
    assert response_text(second) == "reply 1" and second.usage.input_tokens == 5
    assert inner.calls == 1


def test_changed_message_or_parameters_miss(tmp_path):
    inner = CountingEngine()
    engine = CachingEngine(inner, tmp_path)
    engine.complete(request("hello"))
    assert not was_cache_hit(engine.complete(request("hello!")))
    assert not was_cache_hit(engine.complete(request("hello", temperature=0.7)))
    assert inner.calls == 3


def test_scopes_keep_epochs_independent(tmp_path):
    inner = CountingEngine()
    engine = CachingEngine(inner, tmp_path)
    with cache_scope("epoch=0"):
        engine.complete(request("hello"))
    with cache_scope("epoch=1"):
        assert not was_cache_hit(engine.complete(request("hello")))
    with cache_scope("epoch=0"):
        assert was_cache_hit(engine.complete(request("hello")))
