"""Agent-evaluation harness: direct MCP tool calls vs code mode, measured side by side."""

from harness.env import configure_environment

configure_environment()  # offline defaults before dspy/litellm are imported anywhere

__version__ = "0.1.0"
