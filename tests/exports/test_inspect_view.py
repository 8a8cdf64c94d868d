"""The exported logs in inspect_ai's own viewer (`inspect view`, served from the installed package), rendered by
headless Chromium: its sample list shows every run of every arm, and a sample's page its messages and score.
Assertions read the DOM once the page has rendered, not pixels."""

import re
import subprocess
import sys
import time
import urllib.request

import pytest

from harness.exports.inspect_log import write_inspect_logs
from harness.run.records import read_results
from tests.cli.test_models_cli import free_port
from tests.exports.devtools import rendered_dom
from tests.viewer.chromium import needs_chromium

pytestmark = [*needs_chromium, pytest.mark.sandbox]


@pytest.fixture(scope="module")
def inspect_view(smoke_results):
    """`inspect view` on the exported logs of the smoke run: its address, the logs and the run's rows."""
    results, out = smoke_results
    written = write_inspect_logs([results], out / "logs")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "inspect_ai", "view", "start", "--log-dir", str(out / "logs"),
                               "--port", str(port), "--host", "127.0.0.1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    address = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(address, timeout=5).close()
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise RuntimeError(f"inspect view did not start (exit code {server.poll()})") from None
            time.sleep(0.25)
    yield address, written, read_results([results])
    server.terminate()
    server.wait(timeout=30)


def test_the_sample_list_shows_every_run_of_every_arm(inspect_view, tmp_path):
    address, _, rows = inspect_view
    dom = rendered_dom(address + "#/samples/", "smoke/codemode", tmp_path / "profile")
    for arm in ("direct", "codemode"):
        assert dom.count(f">smoke/{arm}<") == (rows.arm == arm).sum()
    for task in rows.task_id.unique():
        assert dom.count(f">{task}<") == (rows.task_id == task).sum()


def test_a_samples_page_shows_its_messages_and_score(inspect_view, tmp_path):
    address, written, rows = inspect_view
    log = next(w.path.name for w in written if w.arm == "codemode")
    row = rows[(rows.arm == "codemode") & (rows.task_id == "shipped-total")].iloc[0]
    page = f"{address}#/tasks/{log}/samples/sample/shipped-total/1/messages"
    dom = rendered_dom(page, "list_orders(", tmp_path / "profile")  # code mode's code, in an assistant message
    assert "Chen Tanaka" in dom  # the task's prompt
    score = re.search(r'title="success">(?:(?!title=).)*?>([CI])</span>', dom, re.DOTALL)
    assert score is not None and score.group(1) == ("C" if row.success else "I")
    assert re.search(rf">Answer</div>(?:(?!</div></div>).)*<p>{re.escape(row.answer)}</p>", dom, re.DOTALL)
