"""Atomic file writes, one durability for every file the harness writes (results, manifests, programs, cache
entries, model markers): a reader or a crash sees the old file or the whole new one, never half of it."""

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# mkstemp makes its file private (0600); a written file gets the mode any new file would (e.g. 0644), so a
# CI artifact or a shared results folder is readable like the rest of the checkout.
_FILE_MODE = 0o666 & ~_umask()


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (POSIX); platforms that cannot open a folder skip it."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, write: Callable[[str], None]) -> None:
    """`write(tmp)` fills a unique temp file in the same folder; it is flushed to disk and renamed over `path`,
    then the folder is synced. If `write` raises, the temp file is removed and `path` is untouched."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, _FILE_MODE)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    _fsync_dir(path.parent)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_bytes(data))


def atomic_write_text(path: Path, text: str) -> None:
    """UTF-8 text, written atomically (see atomic_write)."""
    atomic_write_bytes(path, text.encode("utf-8"))
