"""`scripted:judge`: a deterministic, lexical judge for tests and for proving a judged suite end to end offline.

It reads the message harness.tasks.judging writes (the `Answer:`, `Rubric:` and `Claims:` sections) and answers in
the JSON the judge's instructions ask for. A claim is covered when at least 60% of its content words (four letters
or more, outside a short list of common words) appear in the answer; a rubric's score is the share of the
criteria's content words the answer uses, passing at 0.5. It proves the pipeline, not a judgement: a real judge
is a real model (`--judge-model local`, or any LiteLLM model string).
"""

from __future__ import annotations

import json
import re

from harness.models.scripted import Policy, ScriptedProvider, ScriptedRequest, policy_provider

COVERED_SHARE = 0.6
_WORD = re.compile(r"[a-z0-9][a-z0-9\-]{3,}")
_COMMON = frozenset(
    "that this with from have what which their there about answer states names says should must each they them "
    "more most than when were will would does also into only been being over such these those under your".split())
_SECTION = re.compile(r"^(Task given to the agent|Tool calls the agent made, in order|Rubric|Claims|Answer):\n",
                      re.MULTILINE)


def sections(message: str) -> dict[str, str]:
    """The judge message's sections by title (the retry note, if any, is left in the last one)."""
    found = list(_SECTION.finditer(message))
    return {m.group(1): message[m.end():(found[i + 1].start() if i + 1 < len(found) else len(message))].strip()
            for i, m in enumerate(found)}


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _COMMON}


def word_share(wanted: str, answer_words: set[str]) -> float:
    words = content_words(wanted)
    return sum(w in answer_words for w in words) / len(words) if words else 1.0


def lexical_judge_policy(request: ScriptedRequest) -> str:
    user = next((m["content"] for m in reversed(request.messages) if m["role"] == "user"), "")
    parts = sections(user)
    answer_words = content_words(parts.get("Answer", "").split("\n\nYour previous reply")[0])
    if "Claims" in parts:
        claims = [re.sub(r"^\d+\.\s*", "", line) for line in parts["Claims"].splitlines() if line.strip()]
        verdicts = [{"covered": word_share(c, answer_words) >= COVERED_SHARE, "why": "word overlap"} for c in claims]
        return json.dumps(verdicts)
    score = round(word_share(parts.get("Rubric", ""), answer_words), 3)
    return json.dumps({"score": score, "pass": score >= 0.5, "why": "word overlap with the rubric"})


def scripted_judge_provider(model: str) -> ScriptedProvider:
    """`scripted:judge`: the lexical judge above, the same for every task."""
    policy: Policy = lexical_judge_policy
    return policy_provider(model, lambda task, arm: policy)
