"""The guest's files: part of the guest program (harness/sandbox/guest.py), shipped before it into the same
namespace (harness/sandbox/runtime.py). Standard library only.

A lease may put folders of text files into the sandbox's virtual filesystem (`_harness_mount`, run by the host
before the lease's prelude and again after a restart): written, made read-only if asked (files 0o444, the folders
it created 0o555: Pyodide's filesystem refuses writes to them as POSIX does), put on `sys.path` if importable, and,
if counted, every `open()` of one of its files by sandbox code is recorded (`_harness_take_reads` hands the paths
read to the host with each execution's outcome). A reset undoes every mount first (`_harness_unmount`: the
folders made writable again, so the reset deletes them like any file written since start; `open` is restored with
the `builtins` and `io` modules' state). One mechanism for any folder the host puts into a lease (a run's tool
tree today; a session's workspace may use the same one).
"""

import builtins as _builtins
import io as _io
import os as _os
import sys as _sys

_SKIP_DIRS = ("/proc", "/dev", "/sys")
_OPEN = _io.open  # the real one, bound now: a mount's own writes are never counted
_MOUNTED = []  # paths (files, then folders) the mounts of this lease made read-only, to make writable again
_COUNTED = []  # roots (absolute, with a trailing "/") whose files' opens are recorded
_READS = []  # absolute paths of counted files sandbox code opened, since the last _harness_take_reads


def _files():
    """Every path in the virtual filesystem with (is_dir, size, mtime)."""
    found = {}
    for root, dirs, files in _os.walk("/"):
        dirs[:] = [d for d in dirs if _os.path.join(root, d) not in _SKIP_DIRS]
        for name in dirs + files:
            path = _os.path.join(root, name)
            try:
                st = _os.lstat(path)
            except OSError:
                continue
            found[path] = (name in dirs, st.st_size, st.st_mtime)
    return found


def _counting(original):
    """`open` that records a read of a counted file (any mode; a write to a read-only file fails anyway)."""

    def open(file, *args, **kwargs):  # it stands in for the builtin
        handle = original(file, *args, **kwargs)
        if isinstance(file, (str, bytes, _os.PathLike)):
            path = _os.path.abspath(_os.fsdecode(file))
            if any(path.startswith(root) for root in _COUNTED):
                _READS.append(path)
        return handle

    open.__doc__ = original.__doc__
    return open


def _remove_mounted(root):
    """Remove what an earlier mount of `root` in this lease wrote (a mount can run twice: the interpreter's start
    and the lease's install may both define it), so mounting again starts clean."""
    inside = [p for p in _MOUNTED if p == root or p.startswith(root.rstrip("/") + "/")  # its files and folders,
              or root.startswith(p.rstrip("/") + "/")]  # and the folders it created above itself
    if not inside:
        return
    for path in _MOUNTED:  # its folders may sit in a read-only folder an earlier mount created
        _os.chmod(path, 0o755 if _os.path.isdir(path) else 0o644)
    for path in sorted(inside, key=len, reverse=True):
        try:
            _os.rmdir(path) if _os.path.isdir(path) else _os.remove(path)
        except OSError:  # a folder another mount also writes in: it stays, writable
            inside.remove(path)
    _MOUNTED[:] = [p for p in _MOUNTED if p not in inside]
    for path in _MOUNTED:
        _os.chmod(path, 0o555 if _os.path.isdir(path) else 0o444)


def _harness_mount(root, files, read_only=True, importable=False, count_reads=False):
    """Write `files` ({relative path: text}) under the folder `root` (created if missing), as the host asked."""
    root = _os.path.abspath(root)
    _remove_mounted(root)
    created = []
    for relative, text in sorted(files.items()):
        path = _os.path.join(root, relative)
        folder = _os.path.dirname(path)
        missing = []
        while not _os.path.isdir(folder):
            missing.append(folder)
            folder = _os.path.dirname(folder)
        for folder in reversed(missing):
            _os.mkdir(folder)
            created.append(folder)
        with _OPEN(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        if read_only:
            _os.chmod(path, 0o444)
            _MOUNTED.append(path)
    if read_only:
        for folder in created:
            _os.chmod(folder, 0o555)
            _MOUNTED.append(folder)
    if importable and root not in _sys.path:
        _sys.path.insert(0, root)
        _sys.path_importer_cache.clear()
    if count_reads and not _COUNTED:
        _builtins.open = _io.open = _counting(_OPEN)
    if count_reads and root.rstrip("/") + "/" not in _COUNTED:
        _COUNTED.append(root.rstrip("/") + "/")
    return len(files)


def _harness_unmount():
    """Make what the mounts made read-only writable again, and stop counting: the reset then deletes the files."""
    for path in reversed(_MOUNTED):
        try:
            _os.chmod(path, 0o755 if _os.path.isdir(path) else 0o644)
        except OSError:
            pass
    _MOUNTED.clear()
    _COUNTED.clear()
    _READS.clear()


def _harness_take_reads():
    """The counted files opened since the last call, in order (repeats kept), and forget them."""
    reads = list(_READS)
    _READS.clear()
    return reads
