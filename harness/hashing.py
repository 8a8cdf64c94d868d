"""The content hash that names what a program's tuned state or a task measures."""

import hashlib
import json
from typing import Any


def content_hash(value: Any) -> str:
    """16 hex digits of sha256 over canonical JSON (sorted keys, no spaces, UTF-8 as is). Saved programs and
    results rows carry these, so the canonical form must never change."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
