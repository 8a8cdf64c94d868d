"""Stage 1, what is asked and how it is judged: suites of tasks read from YAML (`suite`), the scorers that judge a
run through one ScoreContext (`scoring`, `scorers`, `call_checks`, `probes`), and the trajectory format a run is
recorded in (`trajectory`). Nothing here runs a model or a server."""
