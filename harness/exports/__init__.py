"""Runs leave in the formats people read: inspect_ai eval logs and OpenTelemetry GenAI traces."""
