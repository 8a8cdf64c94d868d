"""Each run of a Python agent from outside the package in a process of its own (agent:MODULE:FUNCTION, a function
registered with `harness.agent`, a framework's bridge): forked from a warm parent that imported the agent once
(zygote.py, one per agent per harness process), in its own process group and session, started in the run's scratch
folder, its stdout and stderr in the run's log, its answer back as JSON (worker.py); the harness's side (pool.py)
ends the whole group when the run ends, however it ends (groups.py). Nothing the agent does (exit, chdir, threads,
signal handlers, processes left behind, memory) reaches the harness or another run."""
