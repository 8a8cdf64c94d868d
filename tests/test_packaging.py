"""What `pip install .` puts in the wheel, read from pyproject.toml: the package list is written out (the
built-in suites are a package mapped onto the top-level tasks/), so a new subpackage must be added to it."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def package_folder(name: str) -> Path:
    mapped = SETUPTOOLS.get("package-dir", {}).get(name)
    return ROOT / mapped if mapped else ROOT.joinpath(*name.split("."))


def test_every_python_package_in_the_checkout_is_in_the_wheel():
    found = {".".join(init.parent.relative_to(ROOT).parts)
             for top in ("harness", "fixtures_servers") for init in (ROOT / top).rglob("__init__.py")}
    assert found - set(SETUPTOOLS["packages"]) == set()


def test_every_listed_package_has_a_folder():
    assert [name for name in SETUPTOOLS["packages"] if not package_folder(name).is_dir()] == []


def test_the_built_in_suites_are_the_top_level_tasks_folder():
    assert package_folder("harness.builtin_suites") == ROOT / "tasks"


def test_every_suite_file_matches_the_package_data_patterns():
    patterns = SETUPTOOLS["package-data"]["harness.builtin_suites"]
    suites = sorted(p for p in (ROOT / "tasks").rglob("*") if p.is_file())  # suites, and labels/ of judged ones
    assert suites
    assert [p.name for p in suites if not any(p.match(pattern) for pattern in patterns)] == []
