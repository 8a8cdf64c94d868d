"""Running dspy's Deno + Pyodide runner with no network and no host access.

dspy's runner.js imports `https://deno.land/std@0.186.0/io/mod.ts` (unreachable offline) for `readLines`
only: `import_map.json` points that URL at `std_io.js` next to this file. Pyodide (an npm package) is fetched
once into a harness-owned Deno cache; every interpreter then starts `--cached-only`, may read nothing but
that cache (runner.js revokes even that once Pyodide has loaded), and gets an empty environment.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

from harness.env import cache_dir
from harness.errors import UserError

HERE = Path(__file__).resolve().parent
IMPORT_MAP = HERE / "import_map.json"
CACHE_TIMEOUT_S = 600
DEFAULT_MEMORY_MB = 1024
# What the one-time fetch may take from the host: the proxy, the registry, and the certificates a
# TLS-inspecting network needs (DENO_CERT and NODE_EXTRA_CA_CERTS add a bundle; the system store reads
# SSL_CERT_FILE / SSL_CERT_DIR).
FETCH_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
              "NPM_CONFIG_REGISTRY", "DENO_CERT", "DENO_TLS_CA_STORE", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE",
              "SSL_CERT_DIR")
# Deno trusts only its bundled Mozilla roots by default, not the machine's: behind a TLS-inspecting proxy
# (which pip and npm accept through the system store) the fetch fails with `UnknownIssuer`. The system store
# first; Mozilla's still for a machine whose system store is empty.
DEFAULT_CA_STORE = "system,mozilla"


def deno_dir() -> Path:
    """The Deno cache the sandbox uses: $HARNESS_DENO_DIR, else <harness cache>/deno."""
    override = os.environ.get("HARNESS_DENO_DIR")
    return Path(override or cache_dir() / "deno").expanduser().resolve()


@cache
def deno_executable() -> str:
    """The binary of the `deno` PyPI package (a dependency, as for dspy's own interpreter), else `deno` on PATH."""
    try:
        from deno import find_deno_bin

        return find_deno_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("deno") or "deno"


@cache
def runner_path() -> Path:
    """dspy's runner.js, used as shipped (not copied, so dspy's fixes reach us)."""
    import dspy

    return (Path(inspect.getfile(dspy.PythonInterpreter)).resolve().parent / "runner.js").resolve()


def deno_env() -> dict[str, str]:
    """The whole environment of an interpreter process: no host variable is there to leak."""
    return {"DENO_DIR": str(deno_dir()), "DENO_NO_PACKAGE_JSON": "1", "DENO_NO_UPDATE_CHECK": "1",
            "NO_COLOR": "1"}


def fetch_env() -> dict[str, str]:
    """The environment of the one-time Pyodide fetch (the only Deno process with network): the sandbox's, plus
    the host's proxy and certificate settings, and the system trust store unless DENO_TLS_CA_STORE says
    otherwise."""
    host = {name: os.environ[name] for name in FETCH_VARS if os.environ.get(name)}
    return {**deno_env(), "DENO_TLS_CA_STORE": DEFAULT_CA_STORE, **host}


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



def interpreter_command(memory_mb: int = DEFAULT_MEMORY_MB) -> list[str]:
    """`deno_command` under `env -i`, so the process starts with `deno_env()` and nothing of the host's
    environment (dspy's interpreter hands a custom command the host's environment; this way its public
    constructor is all the harness uses)."""
    variables = [f"{name}={value}" for name, value in deno_env().items()]
    return [shutil.which("env") or "/usr/bin/env", "-i", *variables, *deno_command(memory_mb)]


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
    command = [deno_executable(), "cache", *_module_flags(), str(runner_path())]
    try:
        done = subprocess.run(command, env=fetch_env(), capture_output=True, text=True, timeout=CACHE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"could not run Deno to fetch Pyodide ({exc}); reinstall the 'deno' package and "
                        "run `harness setup`") from None
    if done.returncode != 0:
        # Deno ends with the import's location ("at file:///...runner.js:3:27"); the cause is the line before
        causes = [line.strip() for line in done.stderr.splitlines() if line.strip() and
                  not line.strip().startswith("at ")]
        detail = (causes or ["no output"])[-1]
        raise UserError(f"could not fetch Pyodide (npm:pyodide) into {deno_dir()}: {detail}; make the npm "
                        "registry reachable (behind a TLS-inspecting proxy: DENO_CERT=<CA bundle>; or point "
                        "HARNESS_DENO_DIR at a filled cache) and run `harness setup`")
    marker.write_text("pyodide cached for offline use\n")
    return deno_dir()
