"""A tiny checkout in τ²-bench's layout, written by the tests (nothing of the real benchmark is copied): one made-up
domain, `kiosk`, with two tools (a lookup and a write) over a pydantic data model, a three-record database, a
policy, two tasks and a split. Its source imports the package's toolkit, database base and path constants, as the
real domains do, so the adapter's stand-ins are exercised."""

from __future__ import annotations

import json
from pathlib import Path

DOMAIN = "kiosk"

DATA_MODEL = '''
from typing import Dict

from pydantic import BaseModel, Field

from tau2.domains.kiosk.utils import KIOSK_DB_PATH
from tau2.environment.db import DB


class Card(BaseModel):
    owner: str = Field(description="who holds the card")
    balance: float = Field(description="money on the card")


class KioskDB(DB):
    cards: Dict[str, Card] = Field(description="cards by id")
'''

TOOLS = '''
from typing import List

from tau2.domains.kiosk.data_model import Card, KioskDB
from tau2.environment.toolkit import ToolKitBase, ToolType, is_tool


class KioskTools(ToolKitBase):
    """The kiosk's tools."""

    db: KioskDB

    def __init__(self, db: KioskDB) -> None:
        super().__init__(db)

    def _card(self, card_id: str) -> Card:
        if card_id not in self.db.cards:
            raise ValueError("Card not found")
        return self.db.cards[card_id]

    @is_tool(ToolType.READ)
    def get_card(self, card_id: str) -> Card:
        """Get a card's owner and balance.

        Args:
            card_id: The card's id, such as 'k-1'.
        """
        return self._card(card_id)

    @is_tool(ToolType.WRITE)
    def top_up(self, card_id: str, amounts: List[float]) -> Card:
        """Add each amount to a card's balance.

        Args:
            card_id: The card's id.
            amounts: The amounts to add.
        """
        card = self._card(card_id)
        card.balance = round(card.balance + sum(amounts), 2)
        return card
'''

DB = {"cards": {"k-1": {"owner": "Ada", "balance": 10.0}, "k-2": {"owner": "Bo", "balance": 1.5},
                "k-3": {"owner": "Cy", "balance": 0.0}}}

POLICY = "# Kiosk policy\n\nOnly top up the card of the person you are talking to, after they name its id.\n"

TASKS = [
    {"id": "1", "description": None, "initial_state": None,
     "user_scenario": {"persona": None, "instructions": {
         "domain": DOMAIN, "reason_for_call": "You want 5 added to your card k-2.",
         "known_info": "Your card id is k-2.", "unknown_info": "", "task_instructions": "You are brief."}},
     "evaluation_criteria": {"actions": [{"action_id": "1_0", "name": "top_up",
                                          "arguments": {"card_id": "k-2", "amounts": [5.0]}, "info": None}],
                             "communicate_info": ["6.5"], "nl_assertions": None,
                             "reward_basis": ["DB", "COMMUNICATE"]}},
    {"id": "2", "description": None, "initial_state": None,
     "user_scenario": {"persona": "A careful person.", "instructions": "You want to know the balance of card k-1."},
     "evaluation_criteria": {"actions": [{"action_id": "2_0", "name": "get_card", "arguments": {"card_id": "k-1"},
                                          "info": None}],
                             "communicate_info": [], "nl_assertions": ["The agent says the balance."],
                             "reward_basis": ["DB", "NL_ASSERTION"]}},
]


def write_tau2_lookalike(root: Path, domain: str = DOMAIN) -> Path:
    """Write the checkout under `root` (or add the kiosk domain to it under another name, `domain`: its modules,
    path constants and classes renamed as a second real domain's would be); returns `root`."""
    def named(text: str) -> str:
        return text.replace(DOMAIN, domain).replace(DOMAIN.upper(), domain.upper()).replace(
            DOMAIN.capitalize(), domain.capitalize())

    source, data = root / "src" / "tau2" / "domains" / domain, root / "data" / "tau2" / "domains" / domain
    source.mkdir(parents=True)
    data.mkdir(parents=True)
    (source / "__init__.py").write_text("")
    (source / "data_model.py").write_text(named(DATA_MODEL))
    (source / "tools.py").write_text(named(TOOLS))
    (data / "db.json").write_text(json.dumps(DB))
    (data / "policy.md").write_text(named(POLICY))
    (data / "tasks.json").write_text(named(json.dumps(TASKS)))
    (data / "split_tasks.json").write_text(json.dumps({"test": ["1", "2"], "train": [], "base": ["1", "2"]}))
    return root
