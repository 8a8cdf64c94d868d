"""Agent-evaluation harness: direct MCP tool calls vs code mode, measured side by side."""

__version__ = "0.1.0"
