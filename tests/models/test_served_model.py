"""What an --api-base server says it serves (GET /v1/models), asked once per engine for the response cache's key."""

import socket

from dspy.lm15 import Message, Request

from harness.models.litellm_engine import LiteLLMEngine
from harness.models.served_model import pick_entry, served_model_entry, served_name
from tests.models.openai_stub import OpenAIStub

VLLM_ENTRY = {"id": "model", "object": "model", "created": 1764300000, "owned_by": "vllm", "root": "/models/a",
              "max_model_len": 32768, "permission": [{"id": "modelperm-123", "created": 1764300000}]}


def test_the_served_name_is_the_model_string_without_its_provider():
    assert served_name("openai/qwen") == "qwen" and served_name("openai/org/model") == "org/model"
    assert served_name("qwen") == "qwen"


def test_the_entry_named_is_picked_without_the_fields_that_change_per_request():
    listing = {"data": [VLLM_ENTRY, {"id": "other", "root": "/models/b"}]}
    assert pick_entry(listing, "model") == {"id": "model", "object": "model", "owned_by": "vllm", "root": "/models/a",
                                            "max_model_len": 32768}
    assert pick_entry(listing, "missing") is None


def test_a_server_of_one_model_is_that_model_under_any_name():
    assert pick_entry({"data": [{"id": "alias"}]}, "qwen") == {"id": "alias"}
    assert pick_entry({"data": "nonsense"}, "qwen") is None and pick_entry([], "qwen") is None


def test_the_entry_is_read_from_the_server():
    with OpenAIStub("IN", models=[VLLM_ENTRY]) as server:
        entry = served_model_entry(server.url, "openai/model")
    assert entry is not None and entry["root"] == "/models/a" and "created" not in entry


def test_a_server_without_the_endpoint_or_not_listening_gives_none():
    with OpenAIStub("IN", models=None) as server:
        assert served_model_entry(server.url, "openai/model") is None
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    assert served_model_entry(f"http://127.0.0.1:{closed}/v1", "openai/model", timeout_s=1.0) is None


def test_an_engine_asks_its_server_once_however_many_calls_it_makes(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    with OpenAIStub("IN", models=[{"id": "model", "root": "/models/a"}]) as server:
        engine = LiteLLMEngine("openai/model", api_base=server.url + "/")
        for _ in range(3):
            engine.complete(Request(model="openai/model", messages=(Message.user("Where?"),)))
            assert engine.endpoint_identity() == {"api_base": server.url, "served": {"id": "model",
                                                                                    "root": "/models/a"}}
    assert server.model_requests == 1 and server.chat_requests == 3


def test_a_provider_model_string_has_no_endpoint_to_key():
    assert LiteLLMEngine("openai/gpt-4o-mini").endpoint_identity() is None
