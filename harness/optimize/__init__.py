"""Tuning an arm's prompt with DSPy optimizers over episodes of a suite (`optimizer`); the tuned program is saved
by `harness.agents.programs` and run with `harness run --program`."""
