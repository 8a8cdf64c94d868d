"""Stage 2, the tools: the fixture servers and external MCP servers a task names (`servers`, `external`), opened
fresh per run as one session whose calls are recorded; their tools as one toolbox (`toolbox`), and the bridge
that lets code in the sandbox call them (`bridge`)."""
