"""The prefix cache's own rules: longest shared prefix wins, a different prefix misses, the byte bound evicts
the least recently used state, and the environment switch turns it off."""

import pytest

from harness.errors import UserError
from harness.models.prefix_cache import PrefixCache, prefix_cache_from_env, shared_prefix_length


def test_shared_prefix_length_counts_leading_equal_tokens():
    assert shared_prefix_length([1, 2, 3, 4], [1, 2, 9, 4]) == 2
    assert shared_prefix_length([1, 2], [1, 2, 3]) == 2
    assert shared_prefix_length([], [1]) == 0


def test_the_entry_sharing_the_longest_prefix_is_chosen():
    cache = PrefixCache(1000)
    cache.put([1, 2, 3, 4, 5], b"direct")
    cache.put([1, 2, 7, 8], b"codemode")
    hit = cache.best([1, 2, 3, 4, 99, 100])
    assert hit.saved.state == b"direct" and hit.shared_tokens == 4


def test_a_different_prefix_misses():
    cache = PrefixCache(1000)
    cache.put([1, 2, 3], b"state")
    assert cache.best([5, 2, 3]) is None
    assert (cache.hits, cache.misses) == (0, 1)


def test_a_hit_must_share_at_least_what_the_caller_asks():
    cache = PrefixCache(1000)
    cache.put([1, 2, 3, 4], b"state")
    assert cache.best([1, 2, 3, 9], at_least=4) is None
    assert cache.best([1, 2, 3, 9], at_least=3).shared_tokens == 3


def test_the_byte_bound_evicts_the_least_recently_used_state():
    cache = PrefixCache(10)
    cache.put([1], b"aaaa")
    cache.put([2], b"bbbb")
    cache.best([1, 5])  # [1] is now the most recently used
    cache.put([3], b"cccc")
    assert cache.best([2]) is None and cache.best([1]) is not None and cache.best([3]) is not None
    assert cache.evictions == 1 and cache.nbytes == 8


def test_a_state_larger_than_the_whole_cache_is_not_kept():
    cache = PrefixCache(3)
    cache.put([1], b"toolarge")
    assert len(cache) == 0


def test_putting_the_same_tokens_again_replaces_the_state():
    cache = PrefixCache(100)
    cache.put([1, 2], b"old")
    cache.put([1, 2], b"new")
    assert len(cache) == 1 and cache.best([1, 2]).saved.state == b"new"


@pytest.mark.parametrize("value", ["0", "off", "false"])
def test_the_switch_turns_the_cache_off(monkeypatch, value):
    monkeypatch.setenv("HARNESS_PREFIX_CACHE", value)
    assert prefix_cache_from_env() is None


def test_the_capacity_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("HARNESS_PREFIX_CACHE", raising=False)
    monkeypatch.setenv("HARNESS_PREFIX_CACHE_MB", "2")
    assert prefix_cache_from_env().capacity_bytes == 2 * 1024 * 1024


def test_a_capacity_that_is_not_a_number_is_a_user_error(monkeypatch):
    monkeypatch.setenv("HARNESS_PREFIX_CACHE_MB", "lots")
    with pytest.raises(UserError, match="HARNESS_PREFIX_CACHE_MB"):
        prefix_cache_from_env()
