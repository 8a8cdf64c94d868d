"""The records behind the catalogue's task tools, the same at every catalogue size (the size counts tools, not
rows): employees, customer accounts, their invoices and support tickets, generated from the seed."""

from __future__ import annotations

import functools
import random
from datetime import timedelta

from fixtures_servers._common import EPOCH

DEPARTMENTS = ("Executive", "Sales", "Support", "Engineering", "Finance", "People", "Legal", "Marketing")
LOCATIONS = ("Berlin", "London", "Austin", "Singapore")
REGIONS = ("EMEA", "AMER", "APAC")
TIERS = ("enterprise", "growth", "starter")
INVOICE_STATUSES = ("draft", "open", "paid", "overdue", "void")
TICKET_STATUSES = ("open", "pending", "solved", "closed")
PRIORITIES = ("low", "normal", "high", "urgent")

_FIRST = ("Amara", "Bruno", "Chen", "Dalia", "Emil", "Fatima", "Gustav", "Hana", "Ivo", "Jonas", "Keiko", "Lena",
          "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Samir", "Tove", "Umar", "Vera", "Wen", "Yusuf")
_LAST = ("Abara", "Berg", "Castillo", "Dubois", "Eriksen", "Fischer", "Garcia", "Horvat", "Ilves", "Jensen",
         "Kowalczyk", "Lindqvist", "Moreau", "Novak", "Okafor", "Petrov", "Quinn", "Rossi", "Sato", "Tanaka")
_COMPANIES = ("Northwind Traders", "Bluefin Logistics", "Helios Energy", "Quarry & Co", "Lumen Health",
              "Orbital Foods", "Cedar Analytics", "Tidewater Bank", "Falcon Robotics", "Maple Insurance",
              "Juniper Retail", "Aster Pharma", "Granite Works", "Pioneer Media", "Solstice Travel",
              "Nimbus Software", "Redwood Mobility", "Kestrel Security", "Meridian Hotels", "Vantage Telecom",
              "Harbor Freight Lines", "Copperleaf Foods", "Everline Fashion", "Summit Education")
_INDUSTRIES = ("logistics", "energy", "healthcare", "finance", "retail", "software", "manufacturing", "media")
_SUBJECTS = ("Cannot log in after password reset", "Invoice shows the wrong VAT number", "Export to CSV times out",
             "SSO setup fails with SAML error", "API returns 429 too often", "Dashboard loads slowly",
             "Request to add seats", "Webhook deliveries failing", "Data missing after import",
             "Question about the renewal quote", "Mobile app crashes on start", "Need a copy of last invoice")
_TAGS = ("billing", "sso", "api", "performance", "mobile", "import", "renewal", "bug")


@functools.lru_cache(maxsize=8)
def generate(seed: int) -> dict[str, tuple[dict, ...]]:
    """Employees, accounts, invoices and tickets for `seed`: records are flat except an account's billing
    contact, and link by id (an account's owner and a ticket's assignee are employees)."""
    rng = random.Random(seed * 7919 + 53)
    employees = []
    heads: dict[str, str] = {}
    for i in range(48):
        first, last = _FIRST[(i * 7 + seed) % len(_FIRST)], _LAST[(i * 11 + seed * 3) % len(_LAST)]
        department = DEPARTMENTS[i] if i < len(DEPARTMENTS) else rng.choice(DEPARTMENTS[1:])
        employee_id = f"E-{1001 + i}"
        if i == 0:
            manager, title = None, "Chief Executive Officer"
        elif i < len(DEPARTMENTS):
            manager, title = "E-1001", f"Head of {department}"
        else:
            leads = [e["id"] for e in employees if e["department"] == department and e["title"].startswith("Team")]
            manager = rng.choice(leads) if leads and rng.random() < 0.6 else heads[department]
            title = "Team Lead" if not leads or rng.random() < 0.15 else rng.choice(("Specialist", "Senior Specialist",
                                                                                     "Associate", "Manager"))
        if i < len(DEPARTMENTS):
            heads[department] = employee_id
        employees.append({"id": employee_id, "name": f"{first} {last}",
                          "email": f"{first.lower()}.{last.lower()}@example.com", "title": title,
                          "department": department, "location": rng.choice(LOCATIONS), "manager_id": manager})
    sellers = [e["id"] for e in employees if e["department"] == "Sales"]
    agents = [e["id"] for e in employees if e["department"] == "Support"]
    accounts, invoices, tickets = [], [], []
    for i, company in enumerate(_COMPANIES):
        contact_first, contact_last = rng.choice(_FIRST), rng.choice(_LAST)
        domain = company.lower().replace(" & ", "-").replace(" ", "") + ".test"
        accounts.append({"id": f"AC-{2001 + i}", "name": company, "region": REGIONS[i % 3] if i % 5 else "EMEA",
                         "tier": rng.choice(TIERS), "industry": rng.choice(_INDUSTRIES), "owner_id": rng.choice(sellers),
                         "billing_contact": {"name": f"{contact_first} {contact_last}",
                                             "email": f"{contact_first.lower()}.{contact_last.lower()}@{domain}"}})
    for account in accounts:
        for _ in range(rng.randrange(2, 6)):
            issued = EPOCH + timedelta(days=rng.randrange(300, 500))
            invoices.append({"id": f"INV-{30001 + len(invoices)}", "account_id": account["id"],
                             "amount": round(rng.uniform(400, 24000), 2), "currency": "EUR",
                             "status": rng.choice(INVOICE_STATUSES), "issued_on": issued.isoformat(),
                             "due_on": (issued + timedelta(days=30)).isoformat()})
    for i in range(72):
        account = rng.choice(accounts)
        tickets.append({"id": f"HD-{4001 + i}", "subject": rng.choice(_SUBJECTS), "account_id": account["id"],
                        "requester_email": account["billing_contact"]["email"], "assignee_id": rng.choice(agents),
                        "priority": rng.choice(PRIORITIES), "status": rng.choice(TICKET_STATUSES),
                        "tags": sorted(rng.sample(_TAGS, rng.randrange(0, 3))), "comments": []})
    return {"employees": tuple(employees), "accounts": tuple(accounts), "invoices": tuple(invoices),
            "tickets": tuple(tickets)}
