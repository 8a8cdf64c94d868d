"""`--suite` values: ADAPTER:PATH goes to the adapter, anything else is a suite name or file."""

import pytest

import harness.adapters  # noqa: F401  registers the published benchmarks
from harness.errors import UserError
from harness.tasks.registry import ADAPTERS, load_suite
from tests.adapters.lookalike import write_lookalike


def test_m3tooleval_is_an_adapter():
    assert "m3tooleval" in ADAPTERS and ADAPTERS["m3tooleval"].scorer == "m3tooleval"


def test_adapter_path_loads_the_benchmark_and_a_name_loads_a_suite_file(tmp_path):
    write_lookalike(tmp_path)
    assert load_suite(f"m3tooleval:{tmp_path}").name == "m3tooleval"
    assert load_suite("smoke").name == "smoke"


def test_an_unknown_benchmark_names_the_known_ones():
    with pytest.raises(UserError, match="unknown benchmark 'tau' .*known: bfcl, m3tooleval"):
        load_suite("tau:/somewhere")


def test_a_benchmark_without_a_path_says_what_to_write():
    with pytest.raises(UserError, match="give the path of the benchmark's checkout after the colon"):
        load_suite("m3tooleval:")
