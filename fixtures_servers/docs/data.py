"""Seeded documents. Transcripts are long meeting records whose action items name real CRM customers
(the crm fixture with the same seed), so a task can move content from one server to the other."""

from __future__ import annotations

import functools
import random
from datetime import date, timedelta

from fixtures_servers.crm.data import generate as crm_customers

SPEAKERS = ("Ana", "Ben", "Chloe", "Dev", "Eli", "Farah")
TOPICS = ("the Q3 roadmap", "renewal pipeline", "support backlog", "pricing experiment", "onboarding funnel",
          "data retention policy", "the mobile release", "partner integrations", "hiring plan", "incident follow-ups")
LINES = (
    "I looked at {topic} again and I think we are mostly on track, but the numbers from last week worry me a bit.",
    "Before we decide anything on {topic}, can we agree on what success looks like for this quarter?",
    "We shipped the first part of {topic}; the second part depends on the platform team finishing their migration.",
    "Customers keep asking about {topic}, and the sales team needs a clear answer by the end of the month.",
    "My concern with {topic} is that we are spreading the team too thin across too many small bets.",
    "I can take a first pass at a written proposal for {topic} and share it in the channel tomorrow.",
    "Let's park the details of {topic} for now and come back to them once we have the usage data.",
    "The feedback from the pilot on {topic} was positive overall, with two complaints about performance.",
    "If we move {topic} to next quarter, what do we lose? I'd like to see that written down before we decide.",
    "Legal reviewed {topic} and had no objections as long as we document the retention periods clearly.",
)
NOTES = ("renewal discount of 15% approved", "wants a call about the enterprise plan", "invoice dispute resolved",
         "requested SSO setup help", "churn risk: escalate to account manager", "interested in the beta program")
DAY0 = date(2026, 5, 4)


def transcript(rng: random.Random, index: int, customers: tuple[dict, ...]) -> tuple[str, list[dict]]:
    """A meeting transcript of ~450 utterances with 3-5 action items to add notes to CRM customers."""
    chosen = rng.sample(list(customers), rng.randrange(3, 6))
    actions = [{"customer_id": c["id"], "customer": c["name"], "note": rng.choice(NOTES)} for c in chosen]
    lines = [f"Meeting transcript: weekly account review #{index}", f"Attendees: {', '.join(SPEAKERS)}", ""]
    action_at = sorted(rng.sample(range(40, 440), len(actions)))
    for n in range(450):
        speaker = rng.choice(SPEAKERS)
        lines.append(f"[{9 + n // 60:02d}:{n % 60:02d}] {speaker}: {rng.choice(LINES).format(topic=rng.choice(TOPICS))}")
        if action_at and n == action_at[0]:
            action_at.pop(0)
            item = actions[len(actions) - len(action_at) - 1]
            lines.append(f"[{9 + n // 60:02d}:{n % 60:02d}] {speaker}: ACTION ITEM - add a note to customer "
                         f"{item['customer_id']} ({item['customer']}): \"{item['note']}\"")
    return "\n".join(lines), actions


@functools.lru_cache(maxsize=16)
def generate(seed: int, size: int) -> tuple[dict, ...]:
    rng = random.Random(seed * 7 + 1)
    customers, _ = crm_customers(seed, 50)
    documents = []
    for i in range(1, size + 1):
        day = (DAY0 + timedelta(days=7 * i)).isoformat()
        if i <= 3:
            body, actions = transcript(rng, i, customers)
            documents.append({"id": f"D-{i:03d}", "title": f"Weekly account review #{i} (transcript)",
                              "kind": "transcript", "date": day, "body": body,
                              "action_customer_ids": ",".join(a["customer_id"] for a in actions)})
        else:
            topic = rng.choice(TOPICS)
            kind = rng.choice(("memo", "spec"))
            body = "\n".join(rng.choice(LINES).format(topic=topic) for _ in range(rng.randrange(4, 12)))
            documents.append({"id": f"D-{i:03d}", "title": f"{kind.title()}: {topic}", "kind": kind, "date": day,
                              "body": body, "action_customer_ids": ""})
    return tuple(documents)
