"""`harness run --otel-endpoint` as a user runs it: without the option no OpenTelemetry SDK is loaded, a backend
that cannot be reached is one warning line and every row is kept, an endpoint that is no URL is one error line."""

from __future__ import annotations

import json

import pytest

from harness.run.records import read_table
from tests.cli.helpers import harness
from tests.exports.otel_runs import closed_port_url

pytestmark = pytest.mark.cli  # runs the harness command in a subprocess, as a user would

# scripted:garbage: every run ends in a parse error without the sandbox a reference trace needs (fast), and leaves
# its row and trajectory like any other.
RUN = ("run", "--suite", "smoke", "--model", "scripted:garbage", "--arms", "direct", "--run-id", "o")
# A plain run in one process, then the names of the modules it loaded (`main` ends with SystemExit).
LOADED = ("import json, sys\nfrom harness.cli import main\nsys.argv = ['harness', *sys.argv[1:]]\n"
          "try:\n    main()\nexcept SystemExit as done:\n    assert not done.code, done.code\n"
          "print(json.dumps(sorted(sys.modules)))")


def test_a_run_without_an_endpoint_loads_no_opentelemetry_sdk_and_no_exporter(tmp_path):
    import subprocess
    import sys

    from tests.cli.helpers import ROOT

    done = subprocess.run([sys.executable, "-c", LOADED, *RUN, "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert "harness.run.runner" in loaded  # it ran
    assert [m for m in loaded if m.startswith(("opentelemetry.sdk", "opentelemetry.exporter", "harness.exports"))] == []


def test_an_endpoint_that_cannot_be_reached_is_one_warning_and_every_row_is_kept(tmp_path):
    url = closed_port_url()
    done = harness(*RUN, "--out", str(tmp_path), "--otel-endpoint", url)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "could not send" in warnings[0] and "Connection refused" in warnings[0]
    assert "Traceback" not in done.stderr and "Transient error" not in done.stderr
    assert read_table(tmp_path / "smoke" / "o.parquet").num_rows == 4


def test_an_endpoint_that_is_no_http_url_stops_the_run_before_it_starts(tmp_path):
    done = harness(*RUN, "--out", str(tmp_path), "--otel-endpoint", "localhost:6006")
    assert done.returncode == 2
    assert done.stderr.strip().startswith("error: --otel-endpoint 'localhost:6006' is not an http(s) URL")
    assert not (tmp_path / "smoke" / "o.parquet").exists()
