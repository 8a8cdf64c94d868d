"""Published benchmarks: adapters that read a benchmark from the user's own checkout at run time and turn it into
a Suite of tasks plus FastMCP servers built fresh for every run. Importing this package registers each adapter
with suite loading (harness.tasks.registry: `--suite ADAPTER:PATH`) and its servers with the server registry
(harness.mcp.registry); the command line, the public API and the runner import it. Nothing of a benchmark is
copied into this repository."""

from harness.adapters.adapter import BenchmarkAdapter
from harness.adapters.m3tooleval import M3ToolEval
from harness.adapters.tau2 import Tau2
from harness.mcp.registry import register_source
from harness.tasks.registry import register_adapter

BENCHMARK_ADAPTERS: tuple[BenchmarkAdapter, ...] = (M3ToolEval(), Tau2())

for _adapter in BENCHMARK_ADAPTERS:
    register_adapter(_adapter)
    register_source(_adapter.name, _adapter.build_server)
