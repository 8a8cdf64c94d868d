"""Folders of text files a lease puts into its sandbox's virtual filesystem (the guest's `_harness_mount`,
harness/sandbox/guest_files.py): written before the lease's prelude runs and again after a restart, and gone at
the lease's end (the pool's reset undoes them), so one run's files never reach the next lease."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Mount:
    """`files` ({path relative to `root`: text}) under the sandbox folder `root`: read-only unless told (sandbox
    code cannot change them), on `sys.path` if `importable` (a package in them imports), and with `count_reads`
    every `open()` of one of them by sandbox code is reported with the execution (`ExecutionResult.files_read`)."""

    root: str
    files: Mapping[str, str] = field(hash=False)
    read_only: bool = True
    importable: bool = False
    count_reads: bool = False

    def install_code(self) -> str:
        """The guest call that writes it (trusted code, run like the prelude)."""
        arguments = {"root": self.root, "files": dict(self.files), "read_only": self.read_only,
                     "importable": self.importable, "count_reads": self.count_reads}
        return f"_harness_mount(**_loads({json.dumps(arguments, ensure_ascii=False)!r}))"
