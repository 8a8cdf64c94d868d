"""CRM fixture: customers, their orders, and notes an agent can write."""

from fixtures_servers.crm.server import DEFAULT_SIZE, DESCRIPTION, CrmState, build

__all__ = ["DEFAULT_SIZE", "DESCRIPTION", "CrmState", "build"]
