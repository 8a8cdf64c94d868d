"""Large tool results cross into the sandbox in chunks: the host's framing and the guest's joining in plain
CPython, then a 50 MB result through the real bridge."""

import json

import pytest

from harness.sandbox import guest
from harness.sandbox.transfer import RESULT_CHUNK_TOOL, ResultTransfer


def test_a_small_reply_goes_whole():
    transfer = ResultTransfer(chunk_chars=10)
    assert transfer.frame('{"ok": 1}') == '{"ok": 1}'


def test_a_large_reply_is_a_header_and_its_chunks_join_to_it():
    transfer, payload = ResultTransfer(chunk_chars=10), json.dumps({"ok": "x" * 35})
    header = json.loads(transfer.frame(payload))
    assert header == {"chunks": 5, "chars": len(payload)}
    assert "".join(transfer.chunk(i) for i in range(5)) == payload


def test_the_last_chunk_releases_the_reply():
    transfer = ResultTransfer(chunk_chars=4)
    transfer.frame('{"ok": "abcdef"}')
    for index in range(4):
        transfer.chunk(index)
    with pytest.raises(ValueError, match="no chunk 0"):
        transfer.chunk(0)


def test_the_guest_fetches_the_chunks_and_decodes_the_value_once(monkeypatch):
    transfer, asked = ResultTransfer(chunk_chars=7), []

    def host(name, arguments):
        asked.append(name)
        if name == RESULT_CHUNK_TOOL:
            return transfer.chunk(json.loads(arguments)["index"])
        return transfer.frame(json.dumps({"ok": {"rows": ["é" * 20, "b"]}}))

    monkeypatch.setattr(guest, "_call_host", host)
    assert guest._harness_call_tool_json("read", {}) == {"rows": ["é" * 20, "b"]}
    assert asked[0] == "read" and set(asked[1:]) == {RESULT_CHUNK_TOOL} and len(asked) > 3


@pytest.mark.sandbox
async def test_a_50_mb_text_result_crosses_the_bridge(sandbox_pool):
    text = "line of a large tool result\n" * (50_000_000 // 28 + 1)
    prelude = 'def dump() -> str:\n    return _harness_call_tool_json("dump", {})\n'
    async with sandbox_pool.lease(lambda name, arguments: text, prelude=prelude) as sandbox:
        result = await sandbox.execute("t = dump()\nprint(len(t), t.count('\\n'), t[-5:-1])", timeout_s=120)
    assert result.error is None, result.error
    assert result.stdout.split() == [str(len(text)), str(text.count("\n")), "sult"]
    assert result.tool_calls == 1  # the chunks it came in are not tool calls


@pytest.mark.sandbox
async def test_large_results_of_gathered_calls_cross_in_chunks_too(sandbox_pool):
    text = "x" * 3_000_000  # a batch of two: one reply of ~6 MB, so several chunks
    prelude = 'def dump(n: int) -> str:\n    return _harness_call_tool_json("dump", {"n": n})\n'
    async with sandbox_pool.lease(lambda name, arguments: text[:-arguments["n"]], prelude=prelude) as sandbox:
        result = await sandbox.execute("import asyncio\na, b = await asyncio.gather(dump(1), dump(2))\n"
                                       "print(len(a), len(b))", timeout_s=60)
    assert result.error is None and result.stdout.split() == [str(len(text) - 1), str(len(text) - 2)]
    assert result.tool_calls == 2
