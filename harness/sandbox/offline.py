"""Running dspy's Deno + Pyodide sandbox with no network: an import map replaces the one remote import in
dspy's runner.js, Pyodide (an npm package) is fetched once into a harness-owned Deno cache, and every
interpreter afterwards starts with `--cached-only`."""

from __future__ import annotations

import functools
import json
import os
import subprocess
from pathlib import Path

from harness.env import cache_dir
from harness.errors import UserError

STD_IO_URL = "https://deno.land/std@0.186.0/io/mod.ts"
HERE = Path(__file__).resolve().parent
CACHE_TIMEOUT_S = 600


def deno_dir() -> Path:
    """The Deno cache the sandbox uses: $HARNESS_DENO_DIR, else $DENO_DIR, else <harness cache>/deno."""
    return Path(os.environ.get("HARNESS_DENO_DIR") or os.environ.get("DENO_DIR") or cache_dir() / "deno")


def runner_path() -> Path:
    import dspy.primitives.python_interpreter as interpreter_module

    return Path(interpreter_module.__file__).resolve().parent / "runner.js"


def import_map_path() -> Path:
    """Written next to the Deno cache (the package folder may be read-only), pointing at our std_io.ts."""
    path = deno_dir() / "harness-import-map.json"
    content = json.dumps({"imports": {STD_IO_URL: (HERE / "deno" / "std_io.ts").as_uri()}}, indent=1)
    if not path.exists() or path.read_text() != content:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(content)
        os.replace(tmp, path)
    return path


def deno_executable() -> str:
    from dspy.primitives.python_interpreter import _find_deno_executable

    return _find_deno_executable()


def deno_env() -> dict[str, str]:
    return {**os.environ, "DENO_DIR": str(deno_dir()), "DENO_NO_PACKAGE_JSON": "1", "DENO_NO_UPDATE_CHECK": "1"}


@functools.cache
def ensure_pyodide_cached() -> Path:
    """Fetch Pyodide from the npm registry into the Deno cache once (idempotent, <1 s when warm).
    Also points this process's DENO_DIR there: dspy reads it when it builds and spawns interpreters."""
    os.environ["DENO_DIR"] = str(deno_dir())
    command = [deno_executable(), "cache", "--no-config", "--no-lock", "--node-modules-dir=false",
               f"--import-map={import_map_path()}", str(runner_path())]
    try:
        result = subprocess.run(command, env=deno_env(), capture_output=True, text=True, timeout=CACHE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"could not run Deno to cache Pyodide ({exc}); reinstall the 'deno' package") from None
    if result.returncode != 0:
        detail = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"could not fetch Pyodide into the Deno cache {deno_dir()} (is the npm registry "
                        f"reachable?): {detail}")
    return deno_dir()


def offline_flags() -> list[str]:
    """Flags added to dspy's deno command line: the import map, and no fetching at run time."""
    return [f"--import-map={import_map_path()}", "--cached-only", "--v8-flags=--max-old-space-size=2048"]
