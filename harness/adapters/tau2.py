"""τ²-bench (github.com/sierra-research/tau2-bench) as conversation tasks: `--suite tau2:PATH#DOMAIN` (retail,
airline; `tau2:PATH#DOMAIN/SPLIT` for another split than `test`; `tau2:PATH` the leaderboard's domains, retail and
airline, whichever the checkout has: one lacking its data is an error naming the file; telecom, whose user has tools
too, is not supported). Task ids are `DOMAIN/ID`, so `--tasks retail/5,retail/9` picks tasks.

Each task: the domain's policy is the agent's system instructions (Task.system_instructions: after the arm's own, in
every arm), its text is empty (a conversation's task text is the harness's conversation rule and the user's opening:
harness.agents.conversation), its user scenario is what the user model plays (Task.user), and its evaluation
criteria are scored by the `tau2` scorer (harness.adapters.tau2_scoring). Each domain's tools are one MCP server,
built for every run from the checkout's tool class over a fresh copy of its database
(harness.adapters.tau2_checkout); the server's end state is that database. A task's reference (what `harness
validate` and `scripted:reference` run) calls its expected actions in order and prints the information the agent
must communicate. `--scaffold tau2` is τ²-bench's own orchestrator's rules (PROTOCOL).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastmcp import FastMCP

import fixtures_servers
from harness.adapters.functions import PythonTool, python_tools_server
from harness.adapters.tau2_checkout import (
    Domain,
    available_domains,
    checkout_root,
    db_state,
    load_domain,
    plain,
)
from harness.adapters.tau2_scoring import Tau2Reward
from harness.errors import UserError
from harness.tasks.registry import PublishedProtocol
from harness.tasks.task import ScorerSpec, ServerRef, Suite, Task, UserScenario

NAME = "tau2"
DEFAULT_SPLIT = "test"
DEFAULT_DOMAINS = ("airline", "retail")  # `tau2:PATH`: the domains the leaderboard reports (another: `#DOMAIN`)
# Agent turns (LM calls) per conversation under a task's own limit (any preset but `tau2`): τ²-bench bounds a
# simulation at 200 steps of agent, user and tools together; a turn here is one agent step.
MAX_TURNS = 30
# τ²-bench's own runs (its orchestrator, agent/llm_agent.py and run config), as far as scaffold fields express them:
# 200 steps, each one message: the user's opening, then each agent message and the one step answering it (the
# user's reply, or the results of all its tool calls), so at most 100 agent messages; every tool call of an agent
# message runs; tool results are shown whole (no field turns the limit off: one above any result). Its limit of 10
# tool errors, its single trial by default and its temperature 0 are not scaffold fields (docs/benchmarks.md).
PUBLISHED_STEPS = 200
PROTOCOL = PublishedProtocol(
    NAME, "plain", {"turn_limit": PUBLISHED_STEPS // 2, "parallel_tool_calls": True,
                    "observation_limit_chars": 100_000},
    f"τ²-bench's published rules (its orchestrator): plain, every tool call of a message runs, results shown whole, "
    f"at most {PUBLISHED_STEPS // 2} agent messages (its {PUBLISHED_STEPS} steps of agent, user and tools)")
AGENT_INSTRUCTIONS = ("You are a customer service agent. Help the user with their request, following the policy "
                      "below exactly: do only what it allows, and use the tools to look up and change records.\n\n"
                      "<policy>\n{policy}\n</policy>")
SCENARIO_FIELDS = (("reason_for_call", "Why you are contacting customer service"), ("known_info", "What you know"),
                   ("unknown_info", "What you do not know"), ("task_instructions", "How you behave"))


def parse_spec(path: Path) -> tuple[Path, list[str], str]:
    """(checkout root, domains, split) from `PATH`, `PATH#DOMAIN` or `PATH#DOMAIN/SPLIT`."""
    text, _, selector = str(path).partition("#")
    root = checkout_root(Path(text).expanduser())
    domain, _, split = selector.partition("/")
    known = available_domains(root)
    if domain and domain not in known and not (root / "src" / "tau2" / "domains" / domain).is_dir():
        raise UserError(f"--suite tau2:{path}: no domain '{domain}' in the checkout (runnable: {', '.join(known)})")
    # every leaderboard domain the checkout has the source of: one whose data is missing is an error naming the file
    # (loading it), not a domain left out without a word
    present = [d for d in DEFAULT_DOMAINS if (root / "src" / "tau2" / "domains" / d / "tools.py").is_file()]
    domains = [domain] if domain else present
    if not domains:
        raise UserError(f"{root}: no tau2 domain of {', '.join(DEFAULT_DOMAINS)} in the checkout (name one: "
                        f"tau2:PATH#DOMAIN; runnable: {', '.join(known) or 'none'})")
    return root, domains, split or DEFAULT_SPLIT


def scenario_text(scenario: dict[str, Any]) -> str:
    """The user scenario as the user model reads it: its persona and instructions, each under a heading."""
    parts = [f"Persona: {scenario['persona']}"] if scenario.get("persona") else []
    instructions = scenario.get("instructions")
    if isinstance(instructions, str):
        parts.append(instructions)
    elif isinstance(instructions, dict):
        parts += [f"{label}: {instructions[key]}" for key, label in SCENARIO_FIELDS if instructions.get(key)]
    return "\n".join(parts)


def reference_code(actions: list[dict[str, Any]], infos: list[str]) -> str:
    """The expected actions as code that calls them in order (an expected action may fail, as a lookup with what
    the user misremembered does: the next one still runs), then prints what the agent must tell the user."""
    calls = [f"try:\n    {a['name']}(**{a.get('arguments') or {}!r})\nexcept Exception:\n    pass" for a in actions]
    return "\n".join(calls + [f"print({' '.join(infos) or 'done'!r})"])


def _task(domain: Domain, raw: dict[str, Any]) -> Task:
    if raw.get("initial_state"):
        raise UserError(f"{domain.root}: tau2 task {domain.name}/{raw['id']} sets an initial state, which this adapter "
                        "does not apply yet")
    criteria = raw.get("evaluation_criteria") or {}
    actions, infos = list(criteria.get("actions") or []), [str(i) for i in criteria.get("communicate_info") or []]
    expected = {"reward_basis": list(criteria.get("reward_basis") or ["DB", "COMMUNICATE"]),
                "communicate_info": infos, "nl_assertions": list(criteria.get("nl_assertions") or [])}
    task_id = str(raw["id"])
    return Task(
        id=f"{domain.name}/{task_id}", category=domain.name, prompt="",
        system_instructions=AGENT_INSTRUCTIONS.format(policy=domain.policy.strip()),
        expected=expected, reference=reference_code(actions, infos),
        scorer=ScorerSpec(Tau2Reward.name, (("checkout", str(domain.root)), ("domain", domain.name), ("task", task_id))),
        servers=(ServerRef(domain.name, source=f"{NAME}:{domain.root}"),), max_turns=MAX_TURNS,
        metadata={"benchmark": NAME, "tools_hash": domain.source_hash},
        user=UserScenario(scenario_text(raw.get("user_scenario") or {})))


def domain_tasks(domain: Domain, split: str) -> list[Task]:
    """The domain's tasks in the split (in the checkout's order); an unknown split is a UserError."""
    if split not in domain.splits:
        raise UserError(f"{domain.root}: tau2 domain '{domain.name}' has no split '{split}' "
                        f"(known: {', '.join(sorted(domain.splits)) or 'none: no split_tasks.json'})")
    wanted = {str(i) for i in domain.splits[split]}
    return [_task(domain, raw) for raw in domain.tasks if str(raw["id"]) in wanted]


class _DatabaseState:
    """A run's server state: the domain's database, read back as the end state (fixtures_servers.register_state)."""

    def __init__(self, db: Any):
        self.db = db

    def snapshot(self) -> dict[str, Any]:
        return {"db": db_state(self.db)}


def domain_server(domain: Domain) -> FastMCP:
    """A new server with the domain's tools over a fresh copy of its database."""
    db = domain.fresh_db()
    toolkit = domain.toolkit_over(db)

    def calling(name: str):
        method = getattr(toolkit, name)
        return lambda *values: plain(method(*values))

    tools = [PythonTool(tool.name, tool.description, calling(tool.name), tool.params) for tool in domain.tools]
    return fixtures_servers.register_state(python_tools_server(f"{NAME}-{domain.name}", tools), _DatabaseState(db))


class Tau2:
    """The τ²-bench adapter (harness.adapters.adapter.BenchmarkAdapter)."""

    name = NAME
    description = ("τ²-bench: conversations with a simulated user under a policy, scored by the database's end "
                   "state (--suite tau2:PATH#retail, #airline; test split by default)")
    scorer = Tau2Reward.name
    protocol = PROTOCOL  # `--scaffold tau2` (docs/benchmarks.md says where it still differs)

    def load(self, path: Path) -> Suite:
        root, domains, split = parse_spec(path)
        tasks = [task for domain in domains for task in domain_tasks(load_domain(root, domain), split)]
        selector = f"#{domains[0]}" if len(domains) == 1 else ""
        selector += f"/{split}" if split != DEFAULT_SPLIT else ""
        return Suite(name=NAME, description=f"τ²-bench {', '.join(domains)} ({split} split) from {root}",
                     tasks=tuple(tasks), path=root, spec=f"{NAME}:{root}{selector}")

    def build_server(self, path: Path, server: str) -> FastMCP:
        return domain_server(load_domain(checkout_root(path), server))
