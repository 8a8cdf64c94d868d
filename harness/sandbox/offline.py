"""Running dspy's Deno + Pyodide runner with no network and no host access.

dspy's runner.js imports `https://deno.land/std@0.186.0/io/mod.ts` (unreachable offline) for `readLines`
only: `import_map.json` points that URL at `std_io.js` next to this file. Pyodide (an npm package) is fetched
once into a harness-owned Deno cache; every interpreter then starts `--cached-only`, may read nothing but
that cache (runner.js revokes even that once Pyodide has loaded), and gets an empty environment.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from functools import cache
from pathlib import Path

from harness.env import cache_dir
from harness.errors import UserError

HERE = Path(__file__).resolve().parent
IMPORT_MAP = HERE / "import_map.json"
CACHE_TIMEOUT_S = 600
DEFAULT_MEMORY_MB = 1024
_PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
               "NPM_CONFIG_REGISTRY", "DENO_CERT")


def deno_dir() -> Path:
    """The Deno cache the sandbox uses: $HARNESS_DENO_DIR, else <harness cache>/deno."""
    override = os.environ.get("HARNESS_DENO_DIR")
    return Path(override or cache_dir() / "deno").expanduser().resolve()


@cache
def deno_executable() -> str:
    """The binary of the `deno` PyPI package (dspy's own choice), else `deno` on PATH."""
    from dspy.primitives.python_interpreter import _find_deno_executable

    return _find_deno_executable()


@cache
def runner_path() -> Path:
    """dspy's runner.js, used as shipped (not copied, so dspy's fixes reach us)."""
    import dspy.primitives.python_interpreter as interpreter_module

    return (Path(interpreter_module.__file__).resolve().parent / "runner.js").resolve()


def deno_env() -> dict[str, str]:
    """The whole environment of an interpreter process: no host variable is there to leak."""
    return {"DENO_DIR": str(deno_dir()), "DENO_NO_PACKAGE_JSON": "1", "DENO_NO_UPDATE_CHECK": "1",
            "NO_COLOR": "1"}


def _module_flags() -> list[str]:
    return ["--no-config", "--no-lock", "--node-modules-dir=false", f"--import-map={IMPORT_MAP}"]


def deno_command(memory_mb: int = DEFAULT_MEMORY_MB) -> list[str]:
    """`deno run` for one interpreter. Loading modules needs no read permission, so the only grant is the
    Deno cache (Pyodide's wasm and stdlib), which runner.js revokes after loading; no net, env, run, write
    or ffi. WebAssembly memory is capped at `memory_mb` so a memory bomb is a MemoryError, not host OOM."""
    pages = max(16, memory_mb * 16)  # 64 KiB pages
    return [
        deno_executable(), "run", *_module_flags(), "--cached-only", "--no-prompt",
        f"--v8-flags=--max-old-space-size=512,--wasm-max-mem-pages={pages}",
        f"--allow-read={deno_dir()}",
        str(runner_path()),
        "",  # runner.js Deno.args[0]: env var names to copy into Python (none)
        f"--dspy-deno-dir={deno_dir()}",
    ]


def _cache_marker() -> Path:
    key = hashlib.sha256(b"".join([runner_path().read_bytes(), IMPORT_MAP.read_bytes(),
                                   (HERE / "std_io.js").read_bytes(), deno_executable().encode()]))
    return deno_dir() / f".harness-pyodide-{key.hexdigest()[:16]}"


def ensure_pyodide_cached() -> Path:
    """Fetch Pyodide and the runner's modules into `deno_dir()` once (npm registry); afterwards a marker
    file makes this a stat. Raises UserError, one sentence with the fix, if the fetch fails."""
    marker = _cache_marker()
    if marker.exists():
        return deno_dir()
    deno_dir().mkdir(parents=True, exist_ok=True)
    env = {**deno_env(), **{k: os.environ[k] for k in _PROXY_VARS if k in os.environ}}
    command = [deno_executable(), "cache", *_module_flags(), str(runner_path())]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=CACHE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"could not run Deno to fetch Pyodide ({exc}); reinstall the 'deno' package and "
                        "run `harness setup`") from None
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"could not fetch Pyodide (npm:pyodide) into {deno_dir()}: {detail}; make the npm "
                        "registry reachable (or point HARNESS_DENO_DIR at a filled cache) and run `harness setup`")
    marker.write_text("pyodide cached for offline use\n")
    return deno_dir()
