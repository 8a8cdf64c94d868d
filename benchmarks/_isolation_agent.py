"""The agent benchmarks/agent_isolation.py runs: one chat completion through the run's endpoint with the `openai`
client (imported at the top, as a team's module does, so its zygote holds it warm), its reply the answer."""

from __future__ import annotations

from openai import OpenAI


def one_completion(task) -> str:
    client = OpenAI(base_url=task.base_url, api_key=task.api_key)
    reply = client.chat.completions.create(model=task.model, messages=[{"role": "user", "content": task.prompt}])
    return reply.choices[0].message.content or ""
