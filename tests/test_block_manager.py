"""BlockManager unit tests: plain Python, no model.

A sequence's K/V is "computed" here by bumping `num_computed_tokens` and calling
`cache_computed_blocks`, which is what the scheduler does after each forward.
"""

from __future__ import annotations

import random

import pytest

from roseinfer.engine.block_manager import BlockManager
from roseinfer.engine.sequence import Sequence
from roseinfer.sampling_params import SamplingParams

BS = 4


def make_seq(token_ids: list[int], seq_id: int = 0) -> Sequence:
    return Sequence(seq_id, list(token_ids), len(token_ids), SamplingParams(max_new_tokens=8))


def admit_and_compute(bm: BlockManager, seq: Sequence) -> int:
    """Admit `seq` (prefix match), allocate and 'compute' all its tokens; returns the cached count."""
    cached = bm.match_prefix(seq)
    seq.num_computed_tokens = cached
    n = len(seq) - cached
    bm.allocate(seq, n)
    seq.num_computed_tokens += n
    bm.cache_computed_blocks(seq)
    return cached


def assert_all_free(bm: BlockManager) -> None:
    assert bm.num_free_blocks == bm.num_blocks
    assert bm.num_used_blocks == 0
    assert all(b.ref_count == 0 for b in bm.blocks)


def check_invariants(bm: BlockManager, live: list[Sequence]) -> None:
    """Ref counts equal block-table references; the free list is exactly the ref-0 blocks;
    every registered hash points at a block carrying that hash."""
    refs = [0] * bm.num_blocks
    for seq in live:
        for b in seq.block_table:
            refs[b] += 1
    assert [b.ref_count for b in bm.blocks] == refs
    assert set(bm._free) == {b.block_id for b in bm.blocks if b.ref_count == 0}
    for h, block_id in bm._hash_to_block.items():
        assert bm.blocks[block_id].hash == h


def test_rejects_bad_sizes():
    with pytest.raises(ValueError):
        BlockManager(0, 4)
    with pytest.raises(ValueError):
        BlockManager(4, 0)


def test_allocate_grows_by_whole_blocks_and_free_returns_everything():
    bm = BlockManager(8, BS)
    seq = make_seq(list(range(10)))
    assert bm.blocks_needed(10) == 3
    assert bm.num_blocks_to_allocate(seq, 10) == 3
    bm.allocate(seq, 10)
    assert len(seq.block_table) == 3 and len(set(seq.block_table)) == 3
    assert bm.num_free_blocks == 5 and bm.num_used_blocks == 3
    assert bm.usage == pytest.approx(3 / 8)
    assert all(bm.blocks[b].ref_count == 1 for b in seq.block_table)
    seq.num_computed_tokens = 10
    # Two more tokens fit the third block; a third one needs a fourth block.
    assert bm.num_blocks_to_allocate(seq, 2) == 0
    assert bm.num_blocks_to_allocate(seq, 3) == 1
    bm.allocate(seq, 2)
    assert len(seq.block_table) == 3
    bm.allocate(seq, 3)
    assert len(seq.block_table) == 4
    bm.free(seq)
    assert seq.block_table == [] and seq.num_hashed_blocks == 0
    assert_all_free(bm)


def test_out_of_blocks_raises_and_changes_nothing():
    bm = BlockManager(3, BS)
    a, b = make_seq(list(range(8))), make_seq(list(range(8)), 1)
    bm.allocate(a, 8)
    assert bm.can_allocate(b, 4) and not bm.can_allocate(b, 5)
    with pytest.raises(RuntimeError, match="out of KV blocks"):
        bm.allocate(b, 5)
    assert b.block_table == [] and bm.num_free_blocks == 1
    check_invariants(bm, [a, b])


def test_double_free_is_caught():
    bm = BlockManager(4, BS)
    seq = make_seq([1, 2, 3])
    bm.allocate(seq, 3)
    table = list(seq.block_table)
    bm.free(seq)
    seq.block_table = table
    with pytest.raises(AssertionError, match="freed twice"):
        bm.free(seq)


def test_prefix_registered_only_once_computed():
    bm = BlockManager(16, BS)
    a = make_seq(list(range(12)))
    bm.allocate(a, 12)
    # Allocated but nothing computed yet: a request with the same prompt gets no hit.
    b = make_seq(list(range(12)), 1)
    assert bm.match_prefix(b) == 0 and b.block_table == []
    # Half computed: only the first block (fully computed) is registered.
    a.num_computed_tokens = 6
    bm.cache_computed_blocks(a)
    assert a.num_hashed_blocks == 1
    assert bm.match_prefix(b) == BS
    assert b.block_table == a.block_table[:1]
    assert bm.blocks[a.block_table[0]].ref_count == 2
    bm.free(b)
    a.num_computed_tokens = 12
    bm.cache_computed_blocks(a)
    assert a.num_hashed_blocks == 3
    # A prompt equal to the cached tokens still leaves its last token to compute.
    c = make_seq(list(range(12)), 2)
    assert bm.match_prefix(c) == 8
    assert c.num_hashed_blocks == 2
    # A longer prompt gets all three cached blocks.
    d = make_seq(list(range(13)), 3)
    assert bm.match_prefix(d) == 12
    assert d.block_table == a.block_table
    assert [bm.blocks[x].ref_count for x in a.block_table] == [3, 3, 2]
    check_invariants(bm, [a, c, d])
    for s in (a, c, d):
        bm.free(s)
    assert_all_free(bm)


def test_hit_statistics():
    bm = BlockManager(16, BS)
    admit_and_compute(bm, make_seq(list(range(9))))
    assert bm.prefix_hits == 0 and bm.prefix_queries == 9
    assert admit_and_compute(bm, make_seq(list(range(9)), 1)) == 8
    assert bm.prefix_hits == 8 and bm.prefix_queries == 18
    assert bm.prefix_hit_rate == pytest.approx(8 / 18)


def test_hash_is_chained_over_the_whole_prefix():
    bm = BlockManager(16, BS)
    a = make_seq([1, 2, 3, 4, 5, 6, 7, 8, 9])
    admit_and_compute(bm, a)
    # Same second block, different first block: the second block must not match.
    b = make_seq([9, 9, 9, 9, 5, 6, 7, 8, 9], 1)
    assert bm.match_prefix(b) == 0
    # The second block's tokens at position 0: no match either (different position/context).
    c = make_seq([5, 6, 7, 8, 9], 2)
    assert bm.match_prefix(c) == 0
    # Same first block, different second: only the first matches.
    d = make_seq([1, 2, 3, 4, 0, 0, 0, 0, 9], 3)
    assert bm.match_prefix(d) == BS


def test_hash_collisions_never_give_a_wrong_hit():
    class Colliding(BlockManager):
        @staticmethod
        def chain_hash(parent, token_ids):
            return 0  # every block collides

    bm = Colliding(8, BS)
    admit_and_compute(bm, make_seq([1, 2, 3, 4, 5]))
    assert bm.match_prefix(make_seq([9, 9, 9, 9, 5], 1)) == 0
    assert bm.match_prefix(make_seq([1, 2, 3, 4, 6], 2)) == BS


def test_a_parent_key_that_collides_never_hands_over_another_prefixs_blocks():
    """A hit checks the block's own tokens, and its parent only through the chained key: with
    Python's hash() keys (hash(-1) == hash(-2) shows a collision without searching for one)
    a prompt reused a block computed after another prompt's first block (a prefix-cache
    poisoning, vLLM's CVE-2025-25183). SHA-256 keys name the whole prefix."""
    bm = BlockManager(16, 2)
    victim_first = make_seq([-1, 7, 5], 1)  # its first block is cached ...
    admit_and_compute(bm, victim_first)
    attacker = make_seq([-2, 7, 8, 9, 5], 2)  # ... and another first block, then (8, 9)
    admit_and_compute(bm, attacker)
    victim = make_seq([-1, 7, 8, 9, 5], 3)
    assert bm.match_prefix(victim) == 2  # its own first block, not the attacker's (8, 9)
    assert victim.block_table == victim_first.block_table[:1]


def test_freed_cached_blocks_are_reused_until_evicted_lru():
    bm = BlockManager(6, BS)
    a = make_seq(list(range(100, 108)) + [1])  # 2 full blocks + 1 partial
    admit_and_compute(bm, a)
    a_blocks = list(a.block_table)
    bm.free(a)
    assert_all_free(bm)
    assert bm.num_cached_free_blocks == 2  # the partial block is not cached
    # The uncached partial block is handed out first, then free never-cached blocks,
    # and the cached ones last.
    filler = make_seq(list(range(200, 216)), 1)
    bm.allocate(filler, 16)
    assert filler.block_table[0] == a_blocks[2]
    assert not set(filler.block_table) & set(a_blocks[:2])
    assert bm.num_cached_free_blocks == 2
    # The cached blocks still serve a hit while free.
    b = make_seq(list(range(100, 108)) + [2], 2)
    assert bm.match_prefix(b) == 8 and b.block_table == a_blocks[:2]
    bm.free(b)
    bm.free(filler)
    # Now allocate everything: the cached blocks get evicted, so no stale hit afterwards.
    hog = make_seq(list(range(300, 324)), 3)
    bm.allocate(hog, 24)
    assert bm.num_cached_free_blocks == 0 and not bm._hash_to_block
    hog.num_computed_tokens = 24
    bm.cache_computed_blocks(hog)
    bm.free(hog)
    c = make_seq(list(range(100, 108)) + [3], 4)
    assert bm.match_prefix(c) == 0
    check_invariants(bm, [])


def test_tail_blocks_are_evicted_before_the_shared_prefix():
    bm = BlockManager(4, BS)
    a = make_seq(list(range(12)) + [0])  # 3 full blocks
    admit_and_compute(bm, a)
    first, second, third = a.block_table[:3]
    bm.free(a)
    # Evict one block: the tail (third) goes first, the first two stay reusable.
    other = make_seq([7] * 8, 1)
    bm.allocate(other, 8)  # the uncached partial block, then the LRU cached block
    assert third in other.block_table and first not in other.block_table
    b = make_seq(list(range(12)) + [0], 2)
    assert bm.match_prefix(b) == 8
    assert b.block_table == [first, second]


def test_prefix_cache_disabled():
    bm = BlockManager(8, BS, enable_prefix_cache=False)
    admit_and_compute(bm, make_seq(list(range(9))))
    assert all(b.hash is None for b in bm.blocks)
    assert bm.match_prefix(make_seq(list(range(9)), 1)) == 0
    assert bm.prefix_hits == 0


def test_concurrent_duplicate_blocks_keep_one_cache_entry_and_free_cleanly():
    bm = BlockManager(8, BS)
    a, b = make_seq(list(range(9))), make_seq(list(range(9)), 1)
    # Both admitted in the same step: neither sees the other's blocks.
    for s in (a, b):
        assert bm.match_prefix(s) == 0
        bm.allocate(s, 9)
    for s in (a, b):
        s.num_computed_tokens = 9
        bm.cache_computed_blocks(s)
    assert set(bm._hash_to_block.values()) == set(a.block_table[:2])
    c = make_seq(list(range(9)), 2)
    assert bm.match_prefix(c) == 8 and c.block_table == a.block_table[:2]
    check_invariants(bm, [a, b, c])
    for s in (b, a, c):
        bm.free(s)
    assert_all_free(bm)
    assert bm.num_cached_free_blocks == 2  # b's duplicates are plain free blocks


def test_reset_prefix_cache_forgets_hits():
    bm = BlockManager(8, BS)
    admit_and_compute(bm, make_seq(list(range(9))))
    bm.reset_prefix_cache()
    assert bm.match_prefix(make_seq(list(range(9)), 1)) == 0
    assert bm.num_cached_free_blocks == 0


def test_reset_prefix_cache_while_a_sequence_runs_keeps_hashes_chained():
    """Blocks a running sequence computes after a reset must not be registered as if they
    started the sequence: their K/V depends on the tokens before them."""
    bm = BlockManager(8, BS)
    a = make_seq(list(range(12)) + [0])
    bm.allocate(a, 13)
    a.num_computed_tokens = 4
    bm.cache_computed_blocks(a)
    bm.reset_prefix_cache()
    a.num_computed_tokens = 13
    bm.cache_computed_blocks(a)
    # A prompt starting with a's *second* block must not reuse it (computed at positions 4-7).
    b = make_seq(list(range(4, 12)) + [0], 1)
    assert bm.match_prefix(b) == 0
    check_invariants(bm, [a, b])
    bm.free(a)
    assert_all_free(bm)


def test_random_workload_keeps_invariants_and_leaks_nothing():
    rng = random.Random(0)
    bm = BlockManager(24, BS)
    prefixes = [[rng.randrange(50) for _ in range(rng.randrange(1, 14))] for _ in range(4)]
    live: list[Sequence] = []
    for i in range(400):
        action = rng.random()
        if action < 0.45:
            tokens = rng.choice(prefixes) + [rng.randrange(50) for _ in range(rng.randrange(1, 10))]
            seq = make_seq(tokens, i)
            cached = bm.match_prefix(seq)
            seq.num_computed_tokens = cached
            n = len(seq) - cached
            if bm.can_allocate(seq, n):
                bm.allocate(seq, n)
                live.append(seq)
            else:
                bm.free(seq)
        elif action < 0.8 and live:
            seq = rng.choice(live)  # compute some tokens, maybe decode one more
            seq.num_computed_tokens = len(seq)
            bm.cache_computed_blocks(seq)
            if bm.can_allocate(seq, 1):
                seq.token_ids.append(rng.randrange(50))
                bm.allocate(seq, 1)
        elif live:
            bm.free(live.pop(rng.randrange(len(live))))
        check_invariants(bm, live)
    for seq in live:
        bm.free(seq)
    assert_all_free(bm)
    assert bm.prefix_hits > 0
