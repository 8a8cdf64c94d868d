"""The viewer's local server and its static copy serve the same files."""

import threading
import urllib.error
import urllib.request

import pytest

from harness.viewer import export_site, load_index, make_server
from tests.viewer.test_data import store_with


@pytest.fixture
def index(tmp_path):
    store_with(tmp_path / "results", ["t1/direct/m/0", "t2/codemode/m/0"])
    return load_index([tmp_path / "results"])


@pytest.fixture
def served(index, tmp_path):
    report = tmp_path / "report.html"
    report.write_text("<html>the report</html>")
    server = make_server(index, 0, report)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, "", ""


def test_the_server_serves_the_page_the_table_and_each_run(served):
    status, kind, page = get(served + "/")  # redirected to /viewer/
    assert status == 200 and kind.startswith("text/html") and 'src="data/runs.js"' in page
    status, kind, runs = get(served + "/viewer/data/runs.js")
    assert kind.startswith("text/javascript") and runs.startswith('harnessData("runs", ')
    assert '"task_id": "t1"' in runs and '"report": "../report.html"' in runs
    assert get(served + "/viewer/data/run/1.js")[2].startswith('harnessData("run/1", {"sample_id": "t2/codemode/m/0"')
    assert get(served + "/report.html")[2] == "<html>the report</html>"


def test_the_server_serves_nothing_else(served):
    for path in ("/viewer/data/run/2.js", "/viewer/../harness/run/records.py", "/etc/passwd", "/viewer/data/run/x.js"):
        assert get(served + path)[0] == 404, path


def test_the_server_listens_on_localhost_only(index):
    server = make_server(index, 0)
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.server_close()


def test_a_static_copy_holds_the_same_files(index, tmp_path):
    page = export_site(index, tmp_path / "site", report_href="../report.html")
    files = sorted(p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("*") if p.is_file())
    assert files == ["app.css", "app.js", "data/run/0.js", "data/run/1.js", "data/runs.js", "index.html"]
    assert page.read_text() == (tmp_path / "site" / "index.html").read_text()
    assert (tmp_path / "site" / "data" / "run" / "0.js").read_text().startswith('harnessData("run/0", ')
