"""The Host, Origin and token rules, one case at a time (the same checks against a live server: test_http.py)."""

import pytest

from harness.serve.guard import Access, is_loopback, normalize_origin, split_host
from harness.serve.token import BearerToken

TOKEN = BearerToken("t" * 40, "HARNESS_SERVE_TOKEN")
ACCESS = Access.build(TOKEN, origins=["HTTP://LocalHost:6274/"], hosts=["Box.LAN"])


@pytest.mark.parametrize("host, expected", [
    ("127.0.0.1:8765", ("127.0.0.1", 8765)), ("LOCALHOST:8765", ("localhost", 8765)), ("example.com", ("example.com", 80)),
    ("[::1]:8765", ("::1", 8765)), ("[::1]", ("::1", 80)), ("127.0.0.1:x", ("127.0.0.1", None)),
])
def test_a_host_header_splits_into_name_and_port(host, expected):
    assert split_host(host) == expected


@pytest.mark.parametrize("origin, expected", [
    ("http://localhost:6274", "http://localhost:6274"), ("HTTPS://Example.com:443/", "https://example.com"),
    ("http://[::1]:80", "http://[::1]"), ("null", None), ("http://a.com/path", None), ("file:///x", None),
    ("localhost:6274", None),
])
def test_origins_are_compared_in_one_form(origin, expected):
    assert normalize_origin(origin) == expected


def test_loopback_names_and_addresses():
    assert all(map(is_loopback, ["localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]"]))
    assert not any(map(is_loopback, ["0.0.0.0", "192.168.1.5", "example.com", "::"]))


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "box.lan:8765"])
def test_the_host_may_name_the_address_localhost_or_an_allowed_name(host):
    assert ACCESS.host_allowed(host, ("127.0.0.1", 8765))


@pytest.mark.parametrize("host, local", [
    ("evil.example:8765", ("127.0.0.1", 8765)),  # a rebound name
    ("127.0.0.1:9999", ("127.0.0.1", 8765)),  # another port
    ("0.0.0.0:8765", ("127.0.0.1", 8765)),  # the unspecified address browsers send to localhost
    ("localhost:8765", ("192.168.1.5", 8765)),  # localhost, on a connection that came from the network
    ("", ("127.0.0.1", 8765)),  # no Host at all
    ("127.0.0.1:8765", None),  # no local address known
])
def test_any_other_host_is_refused(host, local):
    assert not ACCESS.host_allowed(host, local)


def test_no_origin_passes_and_only_allowed_origins_do():
    assert ACCESS.origin_allowed(None) and ACCESS.origin_allowed("http://localhost:6274")
    assert not ACCESS.origin_allowed("http://localhost:6275") and not ACCESS.origin_allowed("null")
    assert not Access.build(TOKEN).origin_allowed("http://localhost:6274")  # none by default


def test_the_token_must_come_as_a_bearer_credential():
    assert ACCESS.token_matches(f"Bearer {TOKEN.value}") and ACCESS.token_matches(f"bearer {TOKEN.value}")
    assert not ACCESS.token_matches(None) and not ACCESS.token_matches(TOKEN.value)
    assert not ACCESS.token_matches(f"Basic {TOKEN.value}") and not ACCESS.token_matches("Bearer ")
