"""Plugins (harness/plugins.py): a package with an entry point in the `harness.plugins` group registers its parts
through the public register functions; `import harness` loads none, the public API and the command line load them
once; a plugin that fails to load is one line naming it.

Each test installs tests/plugin_example.py as a package of its own: a `.dist-info` folder with entry_points.txt
beside the module on sys.path, which importlib.metadata reads as it reads any installed package's (what pip
writes), or, in the integration test, through `pip install` of a package with a pyproject.toml."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import plugins
from harness.errors import UserError
from harness.mcp.registry import list_servers
from harness.models.families import family_of
from harness.run.records import read_results
from harness.tasks.registry import ADAPTERS
from harness.tasks.scoring import SCORERS
from tests import plugin_example
from tests.cli.helpers import harness
from tests.registered import unregister_plugin_example

MODULE = "harness_plugin_stockroom"
SOURCE = Path(plugin_example.__file__).read_text()


def write_plugin(folder: Path, value: str, source: str = SOURCE, name: str = "stockroom") -> Path:
    """The plugin module and its metadata in `folder`, as an installed package: entry point `name` = `value`."""
    folder.mkdir(parents=True, exist_ok=True)
    module = value.partition(":")[0]
    (folder / f"{module}.py").write_text(source)
    info = folder / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{plugins.GROUP}]\n{name} = {value}\n")
    return folder


@pytest.fixture
def on_path(monkeypatch):
    """Put a plugin folder on sys.path with plugins not yet loaded; afterwards, take out what it registered."""
    monkeypatch.setattr(plugins, "_loaded", None)
    monkeypatch.setattr(plugins, "_failure", None)
    yield monkeypatch.syspath_prepend
    unregister_plugin_example()
    for name in [n for n in sys.modules if n.startswith("harness_plugin_")]:
        del sys.modules[name]


def with_path(folder: Path) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)}


@pytest.mark.parametrize("value, source", [
    (f"{MODULE}:register", SOURCE),  # a callable: called with no arguments
    (MODULE, SOURCE + "\nregister()\n"),  # a module: importing it registers
])
def test_an_entry_point_registers_every_kind_of_part_through_the_public_functions(tmp_path, on_path, value, source):
    on_path(str(write_plugin(tmp_path / "site", value, source)))
    assert "stockroom" in plugins.load_plugins()
    assert ADAPTERS["stockroom"].protocol.name == "stockroom-rules"
    assert "stock-count" in SCORERS
    assert "stockroom-clock" in {server.name for server in list_servers()}
    assert family_of("stockbot:v1").name == "stockbot"


def test_plugins_load_once_per_process(tmp_path, on_path):
    on_path(str(write_plugin(tmp_path / "site", f"{MODULE}:register")))
    plugins.load_plugins()
    ADAPTERS.pop("stockroom")
    plugins.load_plugins()
    assert "stockroom" not in ADAPTERS


def test_a_plugin_that_fails_to_load_is_one_line_naming_it_every_time(tmp_path, on_path):
    on_path(str(write_plugin(tmp_path / "site", "harness_plugin_broken", "import harness_no_such_module\n",
                             name="broken")))
    expected = ("plugin 'broken' (harness_plugin_broken of harness-plugin-broken) failed to load: "
                "ModuleNotFoundError: No module named 'harness_no_such_module'; fix or uninstall it")
    for _ in range(2):
        with pytest.raises(UserError) as raised:
            plugins.load_plugins()
        assert str(raised.value) == expected


def test_import_harness_loads_no_plugin_and_the_public_api_loads_them(tmp_path):
    code = (f"import sys, harness; print('{MODULE}' in sys.modules); harness.load_suite; "
            f"print('{MODULE}' in sys.modules); print(harness.load_suite('stockroom:{tmp_path}').name)")
    plugin_example.write_checkout(tmp_path)
    env = {**os.environ, **with_path(write_plugin(tmp_path / "site", f"{MODULE}:register"))}
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=120)
    assert done.stdout.split() == ["False", "True", "stockroom"], done.stderr


def run_with_plugin(site: Path, tmp_path: Path) -> None:
    """`harness run` on the plugin's benchmark with the plugin's model family, its default scaffold the
    benchmark's preset: every row passes."""
    checkout = plugin_example.write_checkout(tmp_path / "stockroom")
    out = tmp_path / "results"
    done = harness("run", "--suite", f"stockroom:{checkout}", "--model", "stockbot:v1", "--arms", "direct",
                   "--out", str(out), env=with_path(site))
    assert done.returncode == 0, done.stderr
    frame = read_results([out])
    assert sorted(frame.task_id) == ["apples", "pears"] and frame.success.all()
    assert set(frame.scaffold) == {"stockroom-rules"}


@pytest.mark.cli
def test_the_command_line_runs_a_plugins_benchmark_on_its_model_family(tmp_path):
    run_with_plugin(write_plugin(tmp_path / "site", f"{MODULE}:register"), tmp_path)


@pytest.mark.cli
def test_a_plugin_that_fails_is_one_line_and_exit_code_2_on_the_command_line(tmp_path):
    site = write_plugin(tmp_path / "site", "harness_plugin_broken", "raise RuntimeError('no licence')\n", name="broken")
    done = harness("suites", env=with_path(site))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        ("error: plugin 'broken' (harness_plugin_broken of harness-plugin-broken) failed to load: "
         "RuntimeError: no licence; fix or uninstall it")]


PYPROJECT = f"""
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "harness-plugin-stockroom"
version = "1.0"

[project.entry-points."harness.plugins"]
stockroom = "{MODULE}:register"

[tool.setuptools]
py-modules = ["{MODULE}"]
"""


@pytest.mark.integration  # pip builds the package (setuptools from pip's cache or the registry) and installs it
def test_a_pip_installed_package_with_the_entry_point_is_loaded(tmp_path):
    package = tmp_path / "package"
    package.mkdir()
    (package / "pyproject.toml").write_text(PYPROJECT)
    (package / f"{MODULE}.py").write_text(SOURCE)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
                    str(package)], check=True, capture_output=True, timeout=600)
    assert (site / f"{MODULE}-1.0.dist-info" / "entry_points.txt").is_file()  # what pip wrote
    run_with_plugin(site, tmp_path)
