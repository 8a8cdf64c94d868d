"""The harness's version, recorded in every row and saved program (its own module, so recording it imports
nothing else)."""

__version__ = "0.1.0"
