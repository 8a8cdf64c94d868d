from dspy.lm15 import Message, Request, Usage

from harness.models.cache import CachingEngine, was_cache_hit
from harness.models.messages import reply_response, response_text, with_cache_scope


class CountingEngine:
    model_id = "fake/model"

    def __init__(self):
        self.calls = 0

    def complete(self, request):
        self.calls += 1
        return reply_response(f"reply {self.calls}", self.model_id, Usage(input_tokens=5, output_tokens=2))


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
    engine.complete(with_cache_scope(request("hello"), "epoch=0"))
    assert not was_cache_hit(engine.complete(with_cache_scope(request("hello"), "epoch=1")))
    assert was_cache_hit(engine.complete(with_cache_scope(request("hello"), "epoch=0")))
    assert not was_cache_hit(engine.complete(request("hello")))  # no scope is a scope of its own


def test_a_cached_response_keeps_its_finish_reason_and_streams(tmp_path):
    from dspy.lm15 import response_to_events

    engine = CachingEngine(CountingEngine(), tmp_path)
    engine.complete(request("hello"))
    events = list(engine.stream(request("hello")))
    assert [type(e) for e in events] == [type(e) for e in response_to_events(engine.complete(request("hello")))]
    assert engine.complete(request("hello")).finish_reason == "stop"


class AnsweringEngine(CountingEngine):
    def complete(self, request):
        self.calls += 1
        return reply_response("[[ ## answer ## ]]\n42\n\n[[ ## completed ## ]]", self.model_id,
                             Usage(input_tokens=30, output_tokens=6))


def test_through_dspy_the_call_log_marks_hits_and_no_cache_always_calls_the_model(tmp_path):
    import dspy

    from harness.models.engine import CallRecorder, make_lm
    from harness.trace.transcript import Transcript

    predict = dspy.Predict("question -> answer")
    for cache, expected_hits in ((True, [False, True]), (False, [False, False])):
        inner = AnsweringEngine()
        log = Transcript()
        lm = make_lm("fake", CachingEngine(inner, tmp_path / "cache") if cache else inner, recorder=CallRecorder(log))
        with dspy.context(lm=lm):
            answers = [predict(question="6 times 7?").answer for _ in range(2)]
        assert answers == ["42", "42"]
        assert [call.cached for call in log.lm_calls] == expected_hits
        assert inner.calls == (1 if cache else 2)
        assert all(call.prompt_tokens == 30 for call in log.lm_calls)


class CallingEngine(CountingEngine):
    """Replies with a tool call, decoded under a grammar."""

    def complete(self, request):
        from dspy.lm15 import ToolCallPart

        from harness.models.messages import reply_response

        self.calls += 1
        call = ToolCallPart(id="call_0", name="lookup", input={"id": self.calls})
        return reply_response("", self.model_id, Usage(input_tokens=5, output_tokens=2), tool_calls=(call,),
                              grammar=True)


LOOKUP = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}


def tool_request(tools=(LOOKUP,), shape=None, extensions=None) -> Request:
    from dspy.lm15 import Config, FunctionTool

    from harness.models.messages import reply_shape_option

    extensions = reply_shape_option(shape) if shape else extensions
    return Request(model="fake/model", messages=(Message.user("find 1"),), config=Config(extensions=extensions),
                   tools=tuple(FunctionTool(t["function"]["name"], parameters=t["function"]["parameters"])
                               for t in tools))


def test_a_cached_reply_keeps_its_tool_calls_and_grammar_flag(tmp_path):
    from harness.models.messages import used_grammar

    engine = CachingEngine(CallingEngine(), tmp_path)
    engine.complete(tool_request())
    hit = engine.complete(tool_request())
    assert was_cache_hit(hit) and used_grammar(hit)
    assert [(c.id, c.name, c.input) for c in hit.tool_calls] == [("call_0", "lookup", {"id": 1})]
    assert hit.finish_reason == "tool_call"


def test_other_tools_or_another_reply_shape_miss_and_the_same_shape_hits(tmp_path):
    from harness.models.messages import ReplyShape

    other = {"type": "function", "function": {"name": "other", "parameters": {"type": "object", "properties": {}}}}
    inner = CallingEngine()
    engine = CachingEngine(inner, tmp_path)
    for request in (tool_request(), tool_request((LOOKUP, other)), tool_request(shape=ReplyShape("tool_call")),
                    tool_request(shape=ReplyShape("tool_call", answer=True))):
        assert not was_cache_hit(engine.complete(request))
    assert was_cache_hit(engine.complete(tool_request(shape=ReplyShape("tool_call", answer=True))))
    assert inner.calls == 4


class GrammarEngine(CallingEngine):
    """Builds a grammar from the declared reply shape, as the embedded engine does."""

    def __init__(self, grammars: dict[bool, str]):
        super().__init__()
        self.grammars = grammars

    def reply_grammar(self, request):
        from harness.models.messages import request_reply_shape

        shape = request_reply_shape(request)
        return None if shape is None else self.grammars[shape.answer]


def test_a_grammar_building_engine_keys_by_its_grammar_as_when_callers_sent_the_grammar(tmp_path):
    from harness.models.messages import GRAMMAR_KEY, ReplyShape

    CachingEngine(GrammarEngine({False: 'root ::= "a"'}), tmp_path).complete(tool_request(shape=ReplyShape("tool_call")))
    carried = tool_request(extensions={"metadata": {GRAMMAR_KEY: 'root ::= "a"'}})  # a request of the old form
    assert was_cache_hit(CachingEngine(CallingEngine(), tmp_path).complete(carried))


def test_a_changed_grammar_for_the_same_shape_misses(tmp_path):
    from harness.models.messages import ReplyShape

    request = tool_request(shape=ReplyShape("tool_call"))
    CachingEngine(GrammarEngine({False: 'root ::= "a"'}), tmp_path).complete(request)
    assert not was_cache_hit(CachingEngine(GrammarEngine({False: 'root ::= "b"'}), tmp_path).complete(request))
    assert was_cache_hit(CachingEngine(GrammarEngine({False: 'root ::= "b"'}), tmp_path).complete(request))


# ---- whose answers a call reuses: the cache mode ----

def scoped(text: str, run: str, epoch: int = 0) -> Request:
    return with_cache_scope(request(text), f"epoch={epoch}", run)


def test_by_default_only_the_same_run_reuses_its_answers(tmp_path):
    inner = CountingEngine()
    engine = CachingEngine(inner, tmp_path)
    engine.complete(scoped("hello", "first"))
    assert was_cache_hit(CachingEngine(CountingEngine(), tmp_path).complete(scoped("hello", "first")))  # resumed
    again = engine.complete(scoped("hello", "second"))  # a new run of the same request is a new sample
    assert not was_cache_hit(again) and response_text(again) == "reply 2"


def test_replay_reuses_the_newest_answer_any_run_stored_and_stores_what_it_had_to_ask(tmp_path):
    import json
    import os

    first, second = CountingEngine(), CountingEngine()
    second.calls = 10
    CachingEngine(first, tmp_path).complete(scoped("hello", "first"))  # "reply 1"
    CachingEngine(second, tmp_path).complete(scoped("hello", "second"))  # "reply 11"
    entry_of = {json.loads(p.read_text())["run_id"]: p for p in tmp_path.rglob("*.json")}
    os.utime(entry_of["first"], (2e9, 2e9))
    replay = CachingEngine(CountingEngine(), tmp_path, mode="replay")
    hit = replay.complete(scoped("hello", "third"))
    assert was_cache_hit(hit) and response_text(hit) == "reply 1"
    os.utime(entry_of["second"], (3e9, 3e9))
    assert response_text(replay.complete(scoped("hello", "third"))) == "reply 11"
    assert not was_cache_hit(replay.complete(scoped("hello", "third", epoch=1)))  # no run stored epoch 1: asked
    assert was_cache_hit(CachingEngine(CountingEngine(), tmp_path).complete(scoped("hello", "third", epoch=1)))


def test_replay_reads_an_answer_stored_before_answers_were_kept_per_run(tmp_path):
    import json

    from harness.models.cache import request_key

    legacy = scoped("hello", "")
    key = request_key("fake/model", legacy, "epoch=0")
    (tmp_path / key[:2]).mkdir()
    (tmp_path / key[:2] / f"{key}.json").write_text(json.dumps(
        {"model": "fake/model", "text": "old", "usage": {"input_tokens": 1, "output_tokens": 1}}))
    hit = CachingEngine(CountingEngine(), tmp_path, mode="replay").complete(scoped("hello", "replaying"))
    assert was_cache_hit(hit) and response_text(hit) == "old"
    assert not was_cache_hit(CachingEngine(CountingEngine(), tmp_path).complete(scoped("hello", "measuring")))


def test_a_caching_engine_refuses_the_off_mode(tmp_path):
    import pytest

    with pytest.raises(ValueError, match="not 'off'"):
        CachingEngine(CountingEngine(), tmp_path, mode="off")


class EndpointEngine(CountingEngine):
    """An engine that says which server it asks, as an --api-base LiteLLM engine does."""

    def __init__(self, identity):
        super().__init__()
        self.identity = identity

    def endpoint_identity(self):
        return self.identity


def test_the_endpoint_is_part_of_the_key(tmp_path):
    served = {"api_base": "http://127.0.0.1:1/v1", "served": {"id": "model", "root": "a.gguf"}}
    CachingEngine(EndpointEngine(served), tmp_path, mode="replay").complete(scoped("hello", "r"))
    other_port = {**served, "api_base": "http://127.0.0.1:2/v1"}
    other_weights = {**served, "served": {"id": "model", "root": "b.gguf"}}
    for identity in (other_port, other_weights, None):
        assert not was_cache_hit(CachingEngine(EndpointEngine(identity), tmp_path, mode="replay")
                                 .complete(scoped("hello", "r")))
    assert was_cache_hit(CachingEngine(EndpointEngine(dict(served)), tmp_path).complete(scoped("hello", "r")))
