"""Seeded generation of CRM records: the same seed and size always give the same customers and orders."""

from __future__ import annotations

import functools
import random
from datetime import date, timedelta

FIRST = ["Ada", "Bruno", "Chen", "Dalia", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Jun", "Kofi", "Lena",
         "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tara", "Uma", "Viktor", "Wen", "Yusuf"]
LAST = ["Abara", "Berg", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
        "Kowalski", "Larsen", "Moreau", "Nakamura", "Okafor", "Petrov", "Quispe", "Rossi", "Silva", "Tanaka"]
COMPANIES = ["Acme Corp", "Globex", "Initech", "Umbrella Labs", "Stark Supply", "Wayne Freight", "Hooli",
             "Vandelay Imports", "Soylent Foods", "Tyrell Systems", "Cyberdyne", "Wonka Treats"]
COUNTRIES = ["US", "DE", "FR", "JP", "BR", "IN", "NG", "SE", "CA", "AU"]
TIERS = ["free", "pro", "enterprise"]
ORDER_STATUSES = ["shipped", "shipped", "shipped", "pending", "cancelled", "refunded"]
PRODUCTS = ["Widget", "Gadget", "Sprocket", "Flux Capacitor", "Gizmo", "Doohickey", "Thingamajig"]
EPOCH = date(2025, 1, 1)


@functools.lru_cache(maxsize=32)
def generate(seed: int, size: int) -> tuple[tuple[dict, ...], tuple[dict, ...]]:
    """Customers and orders for (seed, size); cached, so callers copy the records before changing them."""
    rng = random.Random(seed)
    customers, orders = [], []
    for i in range(1, size + 1):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        customer_id = f"C-{i:04d}"
        customers.append({
            "id": customer_id,
            "name": f"{first} {last}",
            "email": f"{first.lower()}.{last.lower()}{i}@example.com",
            "company": rng.choice(COMPANIES),
            "country": rng.choice(COUNTRIES),
            "tier": rng.choices(TIERS, weights=[5, 3, 1])[0],
            "status": rng.choices(["active", "churned", "paused"], weights=[8, 2, 1])[0],
            "created_at": (EPOCH + timedelta(days=rng.randrange(0, 365))).isoformat(),
        })
        for _ in range(rng.randrange(0, 7)):
            quantity = rng.randrange(1, 6)
            unit_price = rng.choice([4.5, 9.99, 12.0, 19.5, 49.0, 99.0, 249.0])
            orders.append({
                "customer_id": customer_id,
                "status": rng.choice(ORDER_STATUSES),
                "product": rng.choice(PRODUCTS),
                "quantity": quantity,
                "total": round(quantity * unit_price, 2),
                "currency": "USD",
                "ordered_at": (EPOCH + timedelta(days=rng.randrange(0, 540))).isoformat(),
            })
    orders.sort(key=lambda o: (o["ordered_at"], o["customer_id"]))
    for n, order in enumerate(orders, start=1):
        order["id"] = f"O-{n:05d}"
    return tuple(customers), tuple(orders)
