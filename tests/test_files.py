"""Atomic writes: the target holds the old file or the whole new one, and a failed write leaves no temp file."""

import pytest

from harness.files import atomic_write, atomic_write_text


def test_a_write_replaces_the_file_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "sub" / "out.json"
    atomic_write_text(path, "old")
    atomic_write_text(path, "névé\n")
    assert path.read_bytes() == "névé\n".encode()
    assert sorted(p.name for p in path.parent.iterdir()) == ["out.json"]


def test_a_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "out.json"
    atomic_write_text(path, "old")

    def half_then_fail(tmp: str) -> None:
        with open(tmp, "w") as handle:
            handle.write("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(path, half_then_fail)
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_the_file_gets_the_mode_of_any_new_file_not_a_private_one(tmp_path):
    atomic_write_text(tmp_path / "a.txt", "x")
    plain = tmp_path / "b.txt"
    plain.write_text("x")
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == plain.stat().st_mode & 0o777
