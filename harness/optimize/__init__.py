"""Tuning an arm's prompt with DSPy optimizers (`optimizer`) over episodes of a suite (`episodes`: each one the
same episode as a row of `harness run`); the tuned program is saved by `harness.agents.programs` and run with
`harness run --program`."""
