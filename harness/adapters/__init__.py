"""Published benchmarks: adapters that read a benchmark from the user's own checkout at run time and turn it into
a Suite of tasks plus FastMCP servers built fresh for every run. Importing this package registers each built-in
adapter through `harness.tasks.registry.register_adapter` (public as `harness.register_adapter`), the one call an
adapter from outside the package makes too: suite loading (`--suite ADAPTER:PATH`), its servers and its published
protocol as a scaffold preset all read that one registry. The command line, the public API and the runner import
this package. Nothing of a benchmark is copied into this repository."""

from harness.adapters.bfcl import BfclMultiTurn
from harness.adapters.m3tooleval import M3ToolEval
from harness.adapters.tau2 import Tau2
from harness.tasks.registry import register_adapter

for _adapter in (M3ToolEval(), Tau2(), BfclMultiTurn()):
    register_adapter(_adapter)
