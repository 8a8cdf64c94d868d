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


# ---- the store on disk ----

def _store(tmp_path, capacity=10_000):
    from harness.models.prefix_store import PrefixStore

    return PrefixStore(tmp_path / "states", capacity)


def test_a_saved_prefix_is_found_by_the_next_process_from_disk(tmp_path):
    PrefixCache(1000, _store(tmp_path)).put([1, 2, 3, 4], b"state-bytes")
    later = PrefixCache(1000, _store(tmp_path))  # a new process: nothing in memory yet
    hit = later.best([1, 2, 3, 9])
    assert hit.saved.state == b"state-bytes" and hit.shared_tokens == 3 and later.disk_hits == 1


def test_an_unreadable_file_in_the_store_is_never_used(tmp_path):
    store = _store(tmp_path)
    store.save([1, 2, 3], b"good")
    (store.folder / "broken.prefix").write_bytes(b"\x05")
    assert list(store.index()) == [(1, 2, 3)]


def test_the_store_evicts_its_least_recently_used_files_beyond_its_capacity(tmp_path):
    import os

    store = _store(tmp_path, capacity=2_000)
    first = store.save([1], b"a" * 700)
    os.utime(first, ns=(1, 1))  # written long ago
    store.save([2], b"b" * 700)
    store.save([3], b"c" * 700)
    assert not first.exists() and set(store.index()) == {(2,), (3,)}


def test_a_forgotten_prefix_is_gone_from_memory_and_disk(tmp_path):
    cache = PrefixCache(1000, _store(tmp_path))
    cache.put([1, 2], b"refused")
    cache.forget([1, 2])
    assert cache.best([1, 2]) is None and PrefixCache(1000, _store(tmp_path)).best([1, 2]) is None


def test_the_store_has_a_folder_per_model_file_and_runtime(tmp_path):
    from harness.models.prefix_store import store_folder

    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    assert store_folder(tmp_path, model, "v1") == store_folder(tmp_path, model, "v1")
    assert store_folder(tmp_path, model, "v1") != store_folder(tmp_path, model, "v2")


def test_the_environment_puts_the_store_under_the_harness_cache(tmp_path, monkeypatch):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HARNESS_PREFIX_CACHE", raising=False)
    cache = prefix_cache_from_env(model, "v1")
    assert cache.store.folder.parent == tmp_path / "cache" / "prefix-states"
    monkeypatch.setenv("HARNESS_PREFIX_CACHE_DISK_MB", "0")
    assert prefix_cache_from_env(model, "v1").store is None
