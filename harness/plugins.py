"""Plugins: packages that add arms, scorers, benchmark adapters, servers or model families from outside the
harness, through the same public register functions the package uses for its own (`harness.register_arm`,
`register_scorer`, `register_adapter`, `register_server`, `register_model_family`).

A plugin is an entry point in the `harness.plugins` group of its package's metadata. It names a module (importing
it registers what it defines) or a callable (called with no arguments; it registers). They are loaded once per
process, in entry-point name order, by `load_plugins()`, which the command line, the public API (the first use of
a `harness.NAME`) and each Ray worker call before they read a registry; `import harness` loads none, so start-up
stays as fast as before. A plugin that fails to load is a one-line UserError naming its entry point, every time
`load_plugins()` is called, so nothing runs with half of the plugins a user installed.
"""

from __future__ import annotations

import types
from importlib.metadata import EntryPoint, entry_points

from harness.errors import UserError, describe_exception

GROUP = "harness.plugins"

_loaded: tuple[str, ...] | None = None  # the entry points loaded, once done (or being done)
_failure: UserError | None = None


def plugin_entry_points() -> tuple[EntryPoint, ...]:
    """The installed entry points of the `harness.plugins` group, in name order (a fixed order, so two plugins
    registering the same name resolve the same way in every process)."""
    return tuple(sorted(entry_points(group=GROUP), key=lambda point: (point.name, point.value)))


def _load(point: EntryPoint) -> None:
    try:
        target = point.load()
        if callable(target) and not isinstance(target, types.ModuleType):
            target()
    except Exception as exc:  # noqa: BLE001 - the plugin's code: any failure is the plugin's, reported in one line
        owner = f" of {point.dist.name}" if point.dist is not None else ""
        raise UserError(f"plugin '{point.name}' ({point.value}{owner}) failed to load: {describe_exception(exc)}; "
                        "fix or uninstall it") from None


def load_plugins() -> tuple[str, ...]:
    """Load every installed plugin, once per process; the names of the entry points loaded. Calls made while
    plugins load (a plugin using the public API) return at once, so a plugin never loads the others again."""
    global _loaded, _failure
    if _failure is not None:
        raise _failure
    if _loaded is not None:
        return _loaded
    points = plugin_entry_points()
    _loaded = tuple(point.name for point in points)
    try:
        for point in points:
            _load(point)
    except UserError as exc:
        _failure = exc
        raise
    return _loaded
