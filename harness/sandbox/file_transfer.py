"""Files in a sandbox's virtual filesystem, written by the host before code runs and read back after it: the one
place that moves files across the bridge (a session's workspace/ and skills/, a tree a lease needs).

Writing is trusted code the host puts in a lease's prelude (`write_files_source`), so an interpreter replaced
after a crash gets the same files again; reading back is one call into the guest (`Sandbox.read_files`). Files
cross as base64 (any bytes); the reset between leases deletes whatever a lease wrote (harness.sandbox.guest), so
nothing written here outlives its lease unless the host writes it again.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping

MAX_READ_BYTES = 8 * 1024 * 1024  # read back at most this much per call; files past it are left out, named
SKIPPED_DIRS = ("__pycache__",)  # the interpreter's own byproducts, never the code's files


def write_files_source(files: Mapping[str, bytes], make_dirs: tuple[str, ...] = ()) -> str:
    """Python source that creates `make_dirs` and writes each file (absolute path -> bytes), leaving no names
    behind in the namespace it runs in."""
    payload = {path: base64.b64encode(data).decode("ascii") for path, data in files.items()}
    return (
        "def __harness_write_files(files, dirs):\n"
        "    import base64, os\n"
        "    for d in dirs:\n"
        "        os.makedirs(d, exist_ok=True)\n"
        "    for path, data in files.items():\n"
        "        os.makedirs(os.path.dirname(path) or '/', exist_ok=True)\n"
        "        with open(path, 'wb') as handle:\n"
        "            handle.write(base64.b64decode(data))\n"
        f"__harness_write_files({json.dumps(payload)}, {json.dumps(list(make_dirs))})\n"
        "del __harness_write_files\n"
    )


def read_files_source(roots: tuple[str, ...], limit: int = MAX_READ_BYTES) -> str:
    """Guest code whose value is JSON: {"files": {path: base64}, "left_out": [path, ...]}: every regular file
    under `roots` (absolute folders; a missing one is empty), in path order, up to `limit` bytes in all."""
    return (
        "def __harness_read_files(roots, limit, skipped):\n"
        "    import base64, json, os\n"
        "    files, left_out, total = {}, [], 0\n"
        "    for root in roots:\n"
        "        found = []\n"
        "        for folder, dirs, names in os.walk(root):\n"
        "            dirs[:] = sorted(d for d in dirs if d not in skipped)\n"
        "            found += [os.path.join(folder, n) for n in names]\n"
        "        for path in sorted(found):\n"
        "            if not os.path.isfile(path):\n"
        "                continue\n"
        "            size = os.path.getsize(path)\n"
        "            if total + size > limit:\n"
        "                left_out.append(path)\n"
        "                continue\n"
        "            with open(path, 'rb') as handle:\n"
        "                files[path] = base64.b64encode(handle.read()).decode('ascii')\n"
        "            total += size\n"
        "    return json.dumps({'files': files, 'left_out': left_out})\n"
        f"__harness_read_files({json.dumps(list(roots))}, {limit}, {json.dumps(list(SKIPPED_DIRS))})\n"
    )


def decode_files(raw: str) -> tuple[dict[str, bytes], tuple[str, ...]]:
    """What `read_files_source`'s value says: the files read (path -> bytes) and the paths left out."""
    data = json.loads(raw)
    return ({path: base64.b64decode(text) for path, text in data["files"].items()}, tuple(data["left_out"]))


def imported_modules_source(prefix: str) -> str:
    """Guest code whose value is JSON: the sorted names of modules imported in this lease under `prefix` (a
    package name and dot, as "skills."), with the prefix dropped."""
    return (f"__import__('json').dumps(sorted(name[{len(prefix)}:] for name in __import__('sys').modules "
            f"if name.startswith({prefix!r})))")
