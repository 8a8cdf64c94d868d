"""Stage 1, what is asked: suites of tasks read from YAML (`suite`) and the scorers that judge an answer or a
server's end state (`scorers`). Nothing here runs a model or a server."""
