"""Where the JavaScript code modes live (the cloudflare-codemode and ai-sdk-codemode arms): their pinned npm packages
(harness/js/package.json and its package-lock.json, shipped with the package) installed once with `npm ci` into the
harness's cache by `harness setup --js-codemodes`, one folder per lockfile, so runs are offline after it. The agents'
sources (harness/js/src) are copied beside those packages (Node and esbuild resolve imports from a file's own
folder) and the Worker bundled for workerd with esbuild, whenever the shipped sources differ from the copy.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from pathlib import Path

from harness.env import cache_dir
from harness.errors import UserError

PACKAGE_DIR = Path(__file__).resolve().parent.parent.parent / "js"
SOURCES = ("agent.mjs", "ai_sdk_codemode.mjs", "cloudflare_codemode.mjs", "worker.mjs", "workerd.capnp")
SETUP_COMMAND = "harness setup --js-codemodes"
WORKER_BUNDLE = "worker.js"
MARKER = ".sources-sha256"  # the hash of the sources the copy and its bundle were made from
NPM_TIMEOUT_S = 600.0
BUNDLE_TIMEOUT_S = 60.0
_lock = threading.Lock()


def lock_hash() -> str:
    """The shipped lockfile's hash (its first 12 hex digits name the install folder)."""
    return hashlib.sha256((PACKAGE_DIR / "package-lock.json").read_bytes()).hexdigest()


def install_dir() -> Path:
    """The install folder of the shipped lockfile, under the harness's cache."""
    return cache_dir() / "js-codemodes" / lock_hash()[:12]


def installed() -> bool:
    """Whether `npm ci` of the shipped lockfile completed here (it writes node_modules/.package-lock.json last)."""
    return (install_dir() / "node_modules" / ".package-lock.json").is_file()


def check_installed(arm: str) -> None:
    """The arm's check before any run: one line naming the command that installs the packages."""
    if shutil.which("node") is None:
        raise UserError(f"the {arm} arm needs Node.js (node and npm on PATH), then: {SETUP_COMMAND}")
    if not installed():
        raise UserError(f"the {arm} arm needs its npm packages, installed once (then offline): {SETUP_COMMAND}")


def install() -> Path:
    """`npm ci` of the shipped lockfile into the install folder (once: an install already complete is kept), then
    the sources and the Worker's bundle. A failed install is one line with the end of npm's output."""
    folder = install_dir()
    if not installed():
        npm = shutil.which("npm")
        if npm is None:
            raise UserError(f"{SETUP_COMMAND} needs npm on PATH (Node.js 20 or newer)")
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(PACKAGE_DIR / name, folder / name)
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder,
                              capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip()[-400:]
            raise UserError(f"npm ci in {folder} failed ({done.returncode}): {tail}")
    return prepared()


def _sources_hash() -> str:
    digest = hashlib.sha256()
    for name in SOURCES:
        digest.update(name.encode() + b"\0" + (PACKAGE_DIR / "src" / name).read_bytes())
    return digest.hexdigest()


def prepared() -> Path:
    """The installed folder's `src/`, holding the shipped sources and the Worker's bundle (made again when the
    sources changed); the packages must be installed."""
    source = install_dir() / "src"
    wanted = _sources_hash()
    with _lock:
        marker = source / MARKER
        if marker.is_file() and marker.read_text() == wanted:
            return source
        source.mkdir(parents=True, exist_ok=True)
        for name in SOURCES:  # each file replaced whole: another process may be starting an agent from it
            staged = source / f".{name}.{os.getpid()}"
            shutil.copyfile(PACKAGE_DIR / "src" / name, staged)
            os.replace(staged, source / name)
        esbuild = install_dir() / "node_modules" / ".bin" / "esbuild"
        staged = source / f".{WORKER_BUNDLE}.{os.getpid()}"
        done = subprocess.run([str(esbuild), str(source / "worker.mjs"), "--bundle", "--format=esm",
                               "--platform=browser", "--conditions=workerd,worker", "--external:cloudflare:*",
                               "--external:node:*", f"--outfile={staged}", "--log-level=error"],
                              capture_output=True, text=True, timeout=BUNDLE_TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"esbuild could not bundle the cloudflare-codemode Worker: {done.stderr.strip()}")
        os.replace(staged, source / WORKER_BUNDLE)
        marker.write_text(wanted)
    return source


def package_versions() -> dict[str, str]:
    """The pinned packages and their versions, as the shipped package.json names them."""
    import json

    return dict(json.loads((PACKAGE_DIR / "package.json").read_text())["dependencies"])
