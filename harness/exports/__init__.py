"""Exports: finished runs written in the formats other tools read, each through that tool's own library (an
optional extra, imported only by the export that needs it, never by a run). The inspect_ai export writes one eval
log per suite, arm and model for `inspect view`; each run is read back from its row and its transcript, so
exporting neither changes nor needs the run, and results of older schema and trajectory versions export too.
"""
