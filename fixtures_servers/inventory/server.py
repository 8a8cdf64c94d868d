"""The inventory server: stock items by SKU across warehouses, filtered and paged (size = row count)."""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass

from fastmcp import Context, FastMCP

from fixtures_servers import fixture_server, make_tools, state_of
from fixtures_servers._common import IdForm, copies, find, page

DESCRIPTION = "Stock items across warehouses: filters and paging over thousands of rows"
DEFAULT_SIZE = 2000
WAREHOUSES = ("WH-AMS", "WH-BOS", "WH-OSA", "WH-SAO")
CATEGORIES = ("fasteners", "electronics", "packaging", "tools", "safety", "cleaning", "office")
SUPPLIERS = ("Acme Supply", "Borealis Parts", "Cobalt Trading", "Delta Wholesale", "Evergreen Goods")
ITEM = IdForm("item", "SKU-", 5, "query_items finds items by category, warehouse, supplier or quantity")
NOUNS = ("bolt", "sensor", "box", "wrench", "glove", "mop", "stapler", "cable", "tape", "drill", "mask", "label")


@functools.lru_cache(maxsize=16)
def generate(seed: int, size: int) -> tuple[dict, ...]:
    rng = random.Random(seed * 7919 + 3)
    items = []
    for i in range(1, size + 1):
        category = rng.choice(CATEGORIES)
        items.append({
            "sku": f"SKU-{i:05d}", "name": f"{rng.choice(('steel', 'mini', 'pro', 'eco', 'heavy'))} {rng.choice(NOUNS)}",
            "category": category, "warehouse": rng.choice(WAREHOUSES), "supplier": rng.choice(SUPPLIERS),
            "quantity": rng.randrange(0, 500), "reorder_level": rng.choice((10, 20, 50, 100)),
            "unit_cost": round(rng.uniform(0.5, 250.0), 2),
        })
    return tuple(items)


@dataclass
class InventoryState:
    items: list[dict]

    def snapshot(self) -> dict:
        return {"items": copies(self.items)}


def query_items(ctx: Context, category: str | None = None, warehouse: str | None = None, supplier: str | None = None,
                min_quantity: int | None = None, max_quantity: int | None = None, limit: int = 50,
                offset: int = 0) -> dict:
    """Stock items matching all given filters (category, warehouse code, supplier name, quantity range).
    Each item: sku, name, category, warehouse, supplier, quantity, reorder_level, unit_cost (USD).
    Paged (limit <= 100): returns {items, total, next_offset}; next_offset is null on the last page."""
    hits = [i for i in state_of(ctx).items
            if (category is None or i["category"] == category) and (warehouse is None or i["warehouse"] == warehouse)
            and (supplier is None or i["supplier"] == supplier)
            and (min_quantity is None or i["quantity"] >= min_quantity)
            and (max_quantity is None or i["quantity"] <= max_quantity)]
    chunk, next_offset = page(hits, limit, offset)
    return {"items": chunk, "total": len(hits), "next_offset": next_offset}


def get_item(sku: str, ctx: Context) -> dict:
    """One stock item by its SKU."""
    return dict(find(state_of(ctx).items, "sku", sku, ITEM))


def list_warehouses() -> list[str]:
    """Codes of all warehouses."""
    return list(WAREHOUSES)


def list_categories() -> list[str]:
    """All item categories."""
    return list(CATEGORIES)


TOOLS = make_tools(query_items, get_item, list_warehouses, list_categories)


def build(seed: int = 0, size: int = DEFAULT_SIZE) -> FastMCP:
    """A fresh inventory of `size` items, the same for the same seed."""
    return fixture_server("inventory", "Warehouse inventory: query items with filters and paging.", TOOLS,
                          InventoryState(copies(generate(seed, size))))
