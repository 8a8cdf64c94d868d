"""Saved prefix states on disk, so the next process starts where this one left off.

A state is only valid for the exact model file and llama.cpp build that wrote it, so each such pair has a folder
of its own (its name is a hash of the file's name, size and modification time and of llama-cpp-python's version);
a state llama.cpp refuses anyway is deleted and the prefix evaluated again. The folder is bounded in bytes; the
least recently used files go first.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Sequence
from pathlib import Path

from harness.files import atomic_write

FORMAT = 1
SUFFIX = ".prefix"
_HEADER_SIZE = struct.Struct("<Q")


def store_folder(root: Path, model_path: Path, runtime_version: str) -> Path:
    """The folder for states of this model file under this llama.cpp build."""
    stat = model_path.stat()
    identity = json.dumps([model_path.name, stat.st_size, stat.st_mtime_ns, runtime_version])
    return root / hashlib.sha256(identity.encode()).hexdigest()[:16]


def _file_name(tokens: Sequence[int]) -> str:
    return hashlib.sha256(json.dumps(list(tokens)).encode()).hexdigest()[:32] + SUFFIX


class PrefixStore:
    """One folder of saved prefixes: a header (format, tokens) then the state's bytes, per file."""

    def __init__(self, folder: Path, capacity_bytes: int):
        self.folder, self.capacity_bytes = folder, capacity_bytes

    def index(self) -> dict[tuple[int, ...], Path]:
        """The tokens of every readable saved prefix, read from the files' headers only."""
        found: dict[tuple[int, ...], Path] = {}
        for path in sorted(self.folder.glob(f"*{SUFFIX}")) if self.folder.is_dir() else []:
            try:
                with open(path, "rb") as handle:
                    (size,) = _HEADER_SIZE.unpack(handle.read(_HEADER_SIZE.size))
                    header = json.loads(handle.read(size))
                if header.get("format") == FORMAT:
                    found[tuple(header["tokens"])] = path
            except (OSError, ValueError, KeyError, struct.error):
                continue  # a file cut short or of another format: never used
        return found

    def load(self, path: Path) -> bytes | None:
        """The state saved in `path` (marked as recently used), or None if it cannot be read."""
        try:
            with open(path, "rb") as handle:
                (size,) = _HEADER_SIZE.unpack(handle.read(_HEADER_SIZE.size))
                handle.seek(size, os.SEEK_CUR)
                state = handle.read()
            os.utime(path)
            return state
        except (OSError, struct.error):
            return None

    def save(self, tokens: Sequence[int], state: bytes) -> Path:
        """Write the state atomically, then evict the least recently used files beyond the capacity."""
        header = json.dumps({"format": FORMAT, "tokens": list(tokens)}).encode()
        path = self.folder / _file_name(tokens)

        def write(tmp: str) -> None:
            with open(tmp, "wb") as handle:
                handle.write(_HEADER_SIZE.pack(len(header)) + header)
                handle.write(state)

        atomic_write(path, write)
        self._evict()
        return path

    def forget(self, path: Path) -> None:
        path.unlink(missing_ok=True)

    def _evict(self) -> None:
        files = sorted(self.folder.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime_ns)
        total = sum(p.stat().st_size for p in files)
        for path in files:
            if total <= self.capacity_bytes:
                break
            total -= path.stat().st_size
            path.unlink(missing_ok=True)
