"""The model layer's contract with the agents: OpenAI chat dicts in (tool calls and tool results included),
native tool calls out, the reply shape carried to the engine, every call logged; LiteLLM over a local HTTP stub;
unknown models refused before anything runs; permanent errors told from transient ones."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from dspy.lm15 import Message, Request, TextPart, ToolCallPart, ToolResultPart, Usage

from harness.errors import UserError
from harness.models import check_model
from harness.models.engine import CallRecorder, make_lm
from harness.models.litellm_engine import PLACEHOLDER_API_KEY, LiteLLMEngine
from harness.models.messages import (
    ReplyShape,
    reply_response,
    reply_shape_option,
    request_messages,
    request_reply_shape,
)
from harness.models.retry import RetryPolicy, is_permanent
from harness.trace.transcript import Transcript

SEARCH = {"type": "function", "function": {
    "name": "search_customers", "description": "Find customers by name.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}

CONVERSATION = [
    {"role": "system", "content": "You help."},
    {"role": "user", "content": "Where does Ada live?"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "call_0", "type": "function", "function": {
        "name": "search_customers", "arguments": json.dumps({"query": "Ada"})}}]},
    {"role": "tool", "tool_call_id": "call_0", "name": "search_customers", "content": '[{"id": 7}]'},
]


class ReplyingEngine:
    """Answers every request with the same reply and keeps the requests it saw."""

    model_id = "fake/model"

    def __init__(self, text: str = "", calls: tuple[tuple[str, dict], ...] = (), grammar: bool = False):
        self.text, self.calls, self.grammar, self.requests = text, calls, grammar, []

    def complete(self, request: Request):
        self.requests.append(request)
        parts = tuple(ToolCallPart(id=f"call_{n}", name=name, input=args) for n, (name, args) in enumerate(self.calls))
        return reply_response(self.text, self.model_id, Usage(input_tokens=10, output_tokens=3), tool_calls=parts,
                              grammar=self.grammar)

    def close(self):
        pass


def acall(engine, recorder=None, **kwargs):
    return asyncio.run(make_lm("fake", engine, recorder=recorder).acall(messages=CONVERSATION, **kwargs))


def test_request_messages_are_openai_chat_dicts_with_tool_calls_and_tool_results():
    request = Request(model="m", system="You help.", messages=(
        Message.user("Where does Ada live?"),
        Message.assistant([ToolCallPart(id="call_0", name="search_customers", input={"query": "Ada"})]),
        Message(role="tool", parts=(ToolResultPart(id="call_0", content=(TextPart('[{"id": 7}]'),),
                                                   name="search_customers"),)),
    ))
    assert request_messages(request) == CONVERSATION


def test_what_an_agent_sends_reaches_the_engine_and_reads_back_unchanged():
    engine = ReplyingEngine("done")
    acall(engine, tools=[SEARCH], stop=["</answer>"])
    request = engine.requests[0]
    assert request_messages(request) == CONVERSATION
    assert [tool.name for tool in request.tools] == ["search_customers"]
    assert request.config.stop == ("</answer>",)


def test_a_reply_shape_travels_to_the_engine_through_reply_shape_option():
    engine = ReplyingEngine("done")
    shape = ReplyShape("react_step", tools=(SEARCH,))
    acall(engine, **reply_shape_option(shape))
    assert request_reply_shape(engine.requests[0]) == shape


def test_a_request_without_a_declared_shape_has_none():
    engine = ReplyingEngine("done")
    acall(engine, tools=[SEARCH])
    assert request_reply_shape(engine.requests[0]) is None


def test_a_react_step_cannot_admit_a_plain_answer():
    with pytest.raises(ValueError, match="final_answer"):
        ReplyShape("react_step", answer=True)


def test_a_reply_with_tool_calls_comes_back_from_dspy_as_text_and_openai_tool_calls():
    outputs = acall(ReplyingEngine("Looking.", calls=(("search_customers", {"query": "Ada"}),)), tools=[SEARCH])
    assert outputs == [{"text": "Looking.", "tool_calls": [{"id": "call_0", "type": "function", "function": {
        "name": "search_customers", "arguments": '{"query": "Ada"}'}}]}]


def test_a_reply_without_tool_calls_comes_back_as_a_string():
    assert acall(ReplyingEngine("Ada lives in India."), tools=[SEARCH]) == ["Ada lives in India."]


def test_the_call_log_records_tool_calls_and_whether_a_grammar_was_used():
    engine = ReplyingEngine(calls=(("search_customers", {"query": "Ada"}),), grammar=True)
    log = Transcript()
    acall(engine, recorder=CallRecorder(log), tools=[SEARCH])
    (call,) = log.lm_calls
    assert call.grammar is True
    assert call.tool_calls == ({"name": "search_customers", "arguments": {"query": "Ada"}},)
    assert call.output == "" and call.messages == CONVERSATION


class ReusingEngine(ReplyingEngine):
    """Replies as ReplyingEngine, reporting `reused` cached prompt tokens and, if given, where they came from."""

    def __init__(self, reused: int, source: str | None):
        super().__init__(text="IN")
        self.reused, self.source = reused, source

    def complete(self, request: Request):
        return reply_response("IN", self.model_id, Usage(input_tokens=10, output_tokens=1,
                                                         cache_read_tokens=self.reused), reuse=self.source)


@pytest.mark.parametrize("reused, source, recorded", [
    (900, "prefix_cache", "prefix_cache"),  # the embedded engine restored a saved prefix
    (40, "context", "context"),  # the embedded engine kept the previous call's tokens
    (500, None, "provider"),  # a provider reported cache reads and said nothing more
    (0, None, "none"),
])
def test_the_call_log_records_how_many_prompt_tokens_were_reused_and_from_where(reused, source, recorded):
    log = Transcript()
    acall(ReusingEngine(reused, source), recorder=CallRecorder(log))
    (call,) = log.lm_calls
    assert (call.reused_prompt_tokens, call.reuse_source) == (reused, recorded)


# ---- LiteLLM over an OpenAI-compatible HTTP stub ----

class ChatServer:
    """An OpenAI-compatible /chat/completions endpoint that answers one fixed message and keeps the bodies."""

    def __init__(self, message: dict, finish_reason: str = "stop"):
        self.bodies: list[dict] = []
        self.keys: list[str] = []  # the Authorization header of each request
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                server.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                server.keys.append(self.headers.get("Authorization", ""))
                data = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "stub",
                                   "choices": [{"index": 0, "finish_reason": finish_reason,
                                                "message": {"role": "assistant", **message}}],
                                   "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    def __enter__(self):
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.http.shutdown()

    def engine(self) -> LiteLLMEngine:
        return LiteLLMEngine("openai/stub", api_base=f"http://127.0.0.1:{self.http.server_port}/v1")


TOOL_CALL_MESSAGE = {"content": None, "tool_calls": [{"id": "abc", "type": "function", "function": {
    "name": "search_customers", "arguments": '{"query": "Ada"}'}}]}


@pytest.mark.cli
def test_litellm_sends_tools_and_stop_and_no_harness_options(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    with ChatServer(TOOL_CALL_MESSAGE, "tool_calls") as server:
        acall(server.engine(), tools=[SEARCH], stop=["</answer>"],
              **reply_shape_option(ReplyShape("tool_call", answer=False)))
    (body,) = server.bodies
    assert body["tools"] == [SEARCH] and body["stop"] == ["</answer>"]
    assert body["messages"] == CONVERSATION
    assert "harness_reply" not in json.dumps(body) and "metadata" not in body


def test_litellm_tool_calls_become_native_tool_calls(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    with ChatServer(TOOL_CALL_MESSAGE, "tool_calls") as server:
        request = Request(model="openai/stub", messages=(Message.user("Where does Ada live?"),))
        response = server.engine().complete(request)
    assert [(c.id, c.name, c.input) for c in response.tool_calls] == [("abc", "search_customers", {"query": "Ada"})]
    assert response.finish_reason == "tool_call" and response.usage.input_tokens == 20


def test_litellm_arguments_that_are_not_json_stay_visible_as_text(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    broken = {"content": "", "tool_calls": [{"id": "abc", "type": "function", "function": {
        "name": "search_customers", "arguments": '{"query": '}}]}
    with ChatServer(broken, "tool_calls") as server:
        response = server.engine().complete(Request(model="openai/stub", messages=(Message.user("hi"),)))
    assert response.tool_calls == [] and response.finish_reason == "stop"
    assert response.message.text == 'search_customers({"query": )'


# ---- failing fast ----

@pytest.mark.parametrize("model", ["nosuchprovider:xyz/abc", "nosuchprovider/xyz", "gpt5"])
def test_a_model_litellm_cannot_route_is_refused_in_one_line(model):
    with pytest.raises(UserError, match=f"unknown model '{model}'") as info:
        check_model(model)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("model", ["local", "local:/some/model.gguf", "scripted:reference", "openai/my-served-alias",
                                   "anthropic/claude-3-5-haiku-latest", "ollama/qwen2.5-coder"])
def test_models_that_can_be_routed_are_accepted(model):
    check_model(model, api_base="http://127.0.0.1:8000/v1" if model.startswith("openai/") else None)


def without_network(body: str) -> tuple[subprocess.CompletedProcess, int]:
    """Run `body` in a new Python process, as a cold shell would (no offline default set in its environment),
    with every network connection refused: the process, and how many connections it tried."""
    code = f"""
import socket, sys
attempts = []
def refuse(*args, **kwargs):
    attempts.append(args)
    raise OSError("no network in this test")
socket.socket.connect = socket.getaddrinfo = socket.create_connection = refuse
try:
{textwrap.indent(textwrap.dedent(body), "    ")}
finally:
    print(f"network attempts: {{len(attempts)}}", file=sys.stderr)
"""
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                          check=False)
    return done, int(re.search(r"network attempts: (\d+)", done.stderr).group(1))


@pytest.mark.cli
def test_refusing_an_unknown_model_from_a_cold_start_touches_no_network():
    """litellm fetches its model price map from the web unless told not to (a retry that once took seconds):
    the harness's offline defaults must keep a refusal local. Its CPU time is a figure of
    benchmarks/cold_start.py, not asserted here: a loaded machine is slow, not wrong."""
    done, attempts = without_network("""
        from harness.env import configure_environment
        configure_environment()
        from harness.models import check_model
        check_model('nosuchprovider:xyz/abc')
    """)
    assert "UserError: unknown model 'nosuchprovider:xyz/abc'" in done.stderr
    assert done.stdout == ""  # litellm's help banner stays off the terminal
    assert attempts == 0


@pytest.mark.cli
def test_the_network_guard_sees_litellm_fetch_its_price_map_when_not_told_otherwise():
    """The guard above can fail: without the offline default, importing litellm reaches for the network."""
    _, attempts = without_network("import litellm")
    assert attempts > 0


def _error_of(engine, model: str) -> Exception:
    lm = make_lm(model, engine, retry=RetryPolicy(max_retries=0))
    with pytest.raises(Exception) as info:
        lm(messages=[{"role": "user", "content": "hi"}])
    return info.value


def test_an_unknown_provider_at_call_time_is_permanent():
    assert is_permanent(_error_of(LiteLLMEngine("nosuchprovider/xyz"), "nosuchprovider/xyz"))


def test_a_missing_api_key_is_permanent(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert is_permanent(_error_of(LiteLLMEngine("anthropic/claude-3-5-haiku-latest"), "anthropic/claude"))


def test_an_api_base_without_a_configured_key_is_sent_a_placeholder(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # local servers need no key; the OpenAI client wants one
    with ChatServer({"content": "IN"}) as server:
        response = server.engine().complete(Request(model="openai/stub", messages=(Message.user("hi"),)))
    assert response.message.text == "IN" and server.keys == [f"Bearer {PLACEHOLDER_API_KEY}"]


def test_a_configured_key_is_never_replaced_by_the_placeholder(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-configured")
    with ChatServer({"content": "IN"}) as server:
        server.engine().complete(Request(model="openai/stub", messages=(Message.user("hi"),)))
    assert server.keys == ["Bearer sk-configured"]


def test_without_an_api_base_no_placeholder_is_sent(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a hosted API without its key stays a missing key
    engine = LiteLLMEngine("openai/gpt-4o-mini")
    assert "api_key" not in engine._options(Request(model="openai/gpt-4o-mini", messages=(Message.user("hi"),)))
    assert is_permanent(_error_of(engine, "openai/gpt-4o-mini"))


class RaisingEngine:
    def __init__(self, error: Exception):
        self.error = error

    def complete(self, request):
        raise self.error


def test_a_refused_connection_to_the_api_base_is_permanent():
    import litellm

    error = litellm.InternalServerError("Connection error.", "openai", "x")  # how litellm reports it
    error.__cause__ = ConnectionRefusedError(111, "Connection refused")
    assert is_permanent(_error_of(RaisingEngine(error), "x"))


def test_a_user_error_inside_an_engine_is_permanent():
    assert is_permanent(_error_of(RaisingEngine(UserError("plain.gguf has no chat template")), "x"))


def test_rate_limits_and_prompts_too_long_are_not_permanent():
    import litellm

    assert not is_permanent(_error_of(RaisingEngine(litellm.RateLimitError("slow down", "openai", "x")), "x"))
    too_long = litellm.ContextWindowExceededError("prompt too long", "x", "openai")
    assert not is_permanent(_error_of(RaisingEngine(too_long), "x"))


@pytest.mark.cli
@pytest.mark.parametrize("parallel", [True, False])
def test_litellm_tells_the_provider_whether_several_tool_calls_may_come(monkeypatch, parallel):
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    with ChatServer(TOOL_CALL_MESSAGE, "tool_calls") as server:
        acall(server.engine(), tools=[SEARCH],
              **reply_shape_option(ReplyShape("tool_call", answer=False, parallel=parallel)))
    (body,) = server.bodies
    assert body["parallel_tool_calls"] is parallel


def test_litellm_sends_no_parallel_option_to_a_provider_that_does_not_take_it(monkeypatch):
    """LiteLLM refuses parameters a provider does not take (Ollama's, here) unless told to drop them all."""
    import litellm

    sent = []

    def completion(**kwargs):
        sent.append(kwargs)
        return litellm.ModelResponse(choices=[{"message": {"role": "assistant", "content": "IN"}}])

    monkeypatch.setattr(litellm, "completion", completion)
    engine = LiteLLMEngine("ollama_chat/qwen2.5")
    acall(engine, tools=[SEARCH], **reply_shape_option(ReplyShape("tool_call", answer=True, parallel=True)))
    assert sent and "tools" in sent[0] and "parallel_tool_calls" not in sent[0]


class SettingUpEngine(ReplyingEngine):
    """Replies as ReplyingEngine, reporting every call's prompt evaluation as a first evaluation of a kept prefix."""

    def complete(self, request: Request):
        return reply_response("IN", self.model_id, Usage(input_tokens=10, output_tokens=1), setup_s=4.0)


def test_only_a_roles_first_call_can_carry_the_start_up_of_a_shared_prefix():
    log = Transcript()
    engine = SettingUpEngine()
    for role in ("agent", "agent", "user"):
        acall(engine, recorder=CallRecorder(log, role=role))
    assert [call.setup_s for call in log.lm_calls] == [4.0, 0.0, 4.0]  # a later call's new prefix is its own time
    assert log.cold_start_s == 8.0
