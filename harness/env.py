"""Process-wide settings that keep the harness offline and quiet; applied before dspy/litellm are imported."""

from __future__ import annotations

import logging
import os
from pathlib import Path


def cache_dir() -> Path:
    """Root of the harness's caches (models, LM responses, Deno): $HARNESS_CACHE_DIR or ~/.cache/harness."""
    return Path(os.environ.get("HARNESS_CACHE_DIR") or Path.home() / ".cache" / "harness")


def checkout_root() -> Path | None:
    """The source checkout the package runs from (an editable install or PYTHONPATH), None when it is an
    installed wheel: only a checkout has a git commit and the live tasks/ folder to read."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() else None


def _litellm_tokenizers() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
    return path if path.is_dir() else None


def configure_environment() -> None:
    """Offline defaults: litellm's bundled price map and tiktoken files, no telemetry. Idempotent."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("DSPY_DISABLE_TELEMETRY", "1")
    # Tool errors are part of what is measured and land in the trajectory; FastMCP would also print each
    # one as a rich traceback on the console.
    logging.getLogger("fastmcp").setLevel(logging.CRITICAL)
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        tokenizers = _litellm_tokenizers()
        if tokenizers is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(tokenizers)
