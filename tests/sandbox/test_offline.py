"""The one-time Pyodide fetch: the only Deno process with network, so the only one that gets the host's proxy
and certificate settings (a TLS-inspecting proxy otherwise makes it fail with `UnknownIssuer`)."""

import subprocess

import pytest

from harness.errors import UserError
from harness.sandbox import offline
from harness.sandbox.offline import FETCH_VARS, deno_env, ensure_pyodide_cached, fetch_env


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_DENO_DIR", str(tmp_path / "deno"))
    for name in FETCH_VARS:
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "deno"


def fake_deno(returncode: int, stderr: str = ""):
    seen = {}

    def run(command, env, **kwargs):
        seen.update(command=command, env=env)
        return subprocess.CompletedProcess(command, returncode, "", stderr)

    return run, seen


def test_the_fetch_runs_with_the_system_trust_store(empty_cache, monkeypatch):
    run, seen = fake_deno(0)
    monkeypatch.setattr(offline.subprocess, "run", run)
    ensure_pyodide_cached()
    assert seen["command"][1] == "cache"
    assert "system" in seen["env"]["DENO_TLS_CA_STORE"].split(",")
    assert seen["env"]["DENO_DIR"] == str(empty_cache.resolve())


def test_the_fetch_passes_on_proxy_and_certificate_settings(empty_cache, monkeypatch):
    settings = {"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "localhost", "DENO_CERT": "/etc/corp.pem",
                "SSL_CERT_FILE": "/etc/ssl/bundle.pem", "NODE_EXTRA_CA_CERTS": "/etc/extra.pem"}
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    assert settings.items() <= fetch_env().items()


def test_a_ca_store_chosen_by_the_user_is_kept(empty_cache, monkeypatch):
    monkeypatch.setenv("DENO_TLS_CA_STORE", "mozilla")
    assert fetch_env()["DENO_TLS_CA_STORE"] == "mozilla"


def test_the_sandbox_gets_none_of_the_fetch_settings(empty_cache, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/bundle.pem")
    assert not set(deno_env()) & (set(FETCH_VARS) | {"DENO_TLS_CA_STORE"})


def test_a_failed_fetch_names_the_cause_not_the_import_site(empty_cache, monkeypatch):
    stderr = ("Download https://registry.npmjs.org/pyodide\n"
              "error: Failed loading https://registry.npmjs.org/pyodide for package \"pyodide\"\n"
              "    0: error sending request: client error (Connect): invalid peer certificate: UnknownIssuer\n"
              "    at file:///x/runner.js:3:27\n")
    monkeypatch.setattr(offline.subprocess, "run", fake_deno(1, stderr)[0])
    with pytest.raises(UserError) as info:
        ensure_pyodide_cached()
    assert "UnknownIssuer" in str(info.value) and "DENO_CERT" in str(info.value) and "\n" not in str(info.value)
