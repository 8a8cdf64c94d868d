"""Exports: runs leave in the formats people read, each through that format's own library (an optional extra,
imported only by the export that needs it, never by a plain run): inspect_ai eval logs for `inspect view`, and
OpenTelemetry GenAI traces for Phoenix, Langfuse, MLflow and any OTLP backend. Each run is read back from its row
and its transcript, so exporting neither changes nor needs the run, and results of older schema and trajectory
versions export too.
"""
