"""Test helper: take a server that a test registered (harness.mcp.registry.register_server) out again, so the
next test starts from the package's own registry."""

from harness.mcp import registry


def unregister_server(name: str) -> None:
    registry._REGISTERED.pop(name, None)


def unregister_plugin_example() -> None:
    """Take out everything tests/plugin_example.py registers."""
    from harness.models import families
    from harness.tasks.registry import ADAPTERS
    from harness.tasks.scoring import SCORERS
    from tests import plugin_example

    ADAPTERS.pop(plugin_example.NAME, None)
    SCORERS.pop(plugin_example.StockCount.name, None)
    unregister_server("stockroom-clock")
    families._FAMILIES.pop(plugin_example.STOCKBOT.name, None)
