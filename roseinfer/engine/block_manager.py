"""KV-cache block bookkeeping in plain Python: free list, block tables, ref counts, prefix cache.

The cache tensors themselves live in the model runner; this module only decides which block
ids a sequence owns. A full block whose K/V has been computed is keyed by a hash chained over
(parent block's hash, this block's token ids), so later requests sharing the prefix reuse it.
The hash is SHA-256: a hit checks the block's own tokens, and its parent only through the key,
so a key that could be made to collide (Python's `hash()` of a tuple can) would let one prompt
hand another K/V computed after a different prefix (vLLM's CVE-2025-25183).
Free blocks keep their hash until allocation needs them: evicted least-recently-used first.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class SequenceLike(Protocol):
    """What the block manager reads and writes on a sequence."""

    token_ids: list[int]
    block_table: list[int]
    num_computed_tokens: int
    num_hashed_blocks: int


@dataclass
class Block:
    block_id: int
    ref_count: int = 0
    hash: bytes | None = None  # set once the block is full and computed
    token_ids: tuple[int, ...] = ()  # to confirm a hash hit


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int, enable_prefix_cache: bool = True) -> None:
        if num_blocks < 1 or block_size < 1:
            raise ValueError("num_blocks and block_size must be >= 1")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.enable_prefix_cache = enable_prefix_cache
        self.blocks = [Block(i) for i in range(num_blocks)]
        # ref_count == 0 blocks, oldest first: the LRU end is evicted first.
        self._free: OrderedDict[int, None] = OrderedDict((i, None) for i in range(num_blocks))
        self._hash_to_block: dict[bytes, int] = {}
        self.prefix_hits = 0  # tokens served from the cache
        self.prefix_queries = 0  # prompt tokens looked up

    # ---- figures -------------------------------------------------------------------------
    @property
    def num_free_blocks(self) -> int:
        return len(self._free)

    @property
    def num_used_blocks(self) -> int:
        return self.num_blocks - len(self._free)

    @property
    def num_cached_free_blocks(self) -> int:
        return sum(1 for b in self._free if self.blocks[b].hash is not None)

    @property
    def usage(self) -> float:
        return self.num_used_blocks / self.num_blocks

    @property
    def prefix_hit_rate(self) -> float:
        return self.prefix_hits / self.prefix_queries if self.prefix_queries else 0.0

    def blocks_needed(self, num_tokens: int) -> int:
        return -(-num_tokens // self.block_size)

    # ---- prefix cache --------------------------------------------------------------------
    @staticmethod
    def chain_hash(parent: bytes | None, token_ids: Sequence[int]) -> bytes:
        """SHA-256 of the parent's hash and the token ids (as 32-bit integers): it names the
        whole prefix."""
        return hashlib.sha256((parent or b"") + array("i", token_ids).tobytes()).digest()

    def match_prefix(self, seq: SequenceLike, use_cache: bool = True) -> int:
        """Give a new sequence the longest run of cached full blocks of its tokens.

        Always leaves at least the last token to compute (its logits are needed). Returns the
        number of cached tokens, which becomes the sequence's `num_computed_tokens`.
        `use_cache=False`: a sequence that needs every position computed (prompt logprobs)
        looks up nothing; its lookup still counts, as a miss.
        """
        assert not seq.block_table, "match_prefix is for sequences holding no blocks"
        num_tokens = len(seq.token_ids)
        self.prefix_queries += num_tokens
        if not self.enable_prefix_cache or not use_cache:
            return 0
        bs = self.block_size
        parent: bytes | None = None
        for i in range((num_tokens - 1) // bs):
            chunk = seq.token_ids[i * bs : (i + 1) * bs]
            h = self.chain_hash(parent, chunk)
            block_id = self._hash_to_block.get(h)
            if block_id is None or self.blocks[block_id].token_ids != tuple(chunk):
                break
            self._take(block_id)
            seq.block_table.append(block_id)
            parent = h
        cached = len(seq.block_table) * bs
        seq.num_hashed_blocks = len(seq.block_table)
        self.prefix_hits += cached
        return cached

    def unmatch(self, seq: SequenceLike) -> None:
        """Undo `match_prefix` for a sequence that could not be admitted after all: it gives its
        blocks back and its lookup is not counted (it will be looked up again)."""
        self.prefix_queries -= len(seq.token_ids)
        self.prefix_hits -= len(seq.block_table) * self.block_size
        self.free(seq)

    def cache_computed_blocks(self, seq: SequenceLike) -> None:
        """Register the sequence's full blocks whose K/V is now computed."""
        if not self.enable_prefix_cache:
            return
        bs = self.block_size
        num_full = min(seq.num_computed_tokens // bs, len(seq.block_table))
        for i in range(seq.num_hashed_blocks, num_full):
            parent = self.blocks[seq.block_table[i - 1]].hash if i > 0 else None
            chunk = tuple(seq.token_ids[i * bs : (i + 1) * bs])
            block = self.blocks[seq.block_table[i]]
            block.hash, block.token_ids = self.chain_hash(parent, chunk), chunk
            # An equal block computed concurrently by another sequence keeps the existing entry.
            self._hash_to_block.setdefault(block.hash, block.block_id)
        seq.num_hashed_blocks = max(seq.num_hashed_blocks, num_full)

    def reset_prefix_cache(self) -> None:
        """Forget every cached hash. Blocks in use keep theirs, unregistered, so the blocks their
        sequences fill next still chain to the right parent."""
        self._hash_to_block.clear()
        for block in self.blocks:
            if block.ref_count == 0:
                block.hash, block.token_ids = None, ()
        self.prefix_hits = self.prefix_queries = 0

    # ---- allocation ----------------------------------------------------------------------
    def num_blocks_to_allocate(self, seq: SequenceLike, num_new_tokens: int) -> int:
        needed = self.blocks_needed(seq.num_computed_tokens + num_new_tokens)
        return max(0, needed - len(seq.block_table))

    def can_allocate(self, seq: SequenceLike, num_new_tokens: int) -> bool:
        return self.num_blocks_to_allocate(seq, num_new_tokens) <= len(self._free)

    def allocate(self, seq: SequenceLike, num_new_tokens: int) -> None:
        """Grow the block table so the next `num_new_tokens` tokens have slots."""
        n = self.num_blocks_to_allocate(seq, num_new_tokens)
        if n > len(self._free):
            raise RuntimeError(f"out of KV blocks: need {n}, {len(self._free)} free")
        for _ in range(n):
            block_id, _ = self._free.popitem(last=False)  # least recently used
            block = self.blocks[block_id]
            if block.hash is not None:  # evict its cached contents
                if self._hash_to_block.get(block.hash) == block_id:
                    del self._hash_to_block[block.hash]
                block.hash, block.token_ids = None, ()
            block.ref_count = 1
            seq.block_table.append(block_id)

    def free(self, seq: SequenceLike) -> None:
        """Release every block of the sequence; cached ones stay reusable until evicted."""
        # Tail blocks first, so they are evicted before the shared prefix blocks.
        for block_id in reversed(seq.block_table):
            block = self.blocks[block_id]
            block.ref_count -= 1
            assert block.ref_count >= 0, f"block {block_id} freed twice"
            if block.ref_count == 0:
                if block.hash is None or self._hash_to_block.get(block.hash) != block_id:
                    block.hash, block.token_ids = None, ()
                    self._free[block_id] = None
                    self._free.move_to_end(block_id, last=False)  # uncached: reuse first
                else:
                    self._free[block_id] = None
        seq.block_table.clear()
        seq.num_hashed_blocks = 0

    def _take(self, block_id: int) -> None:
        block = self.blocks[block_id]
        if block.ref_count == 0:
            del self._free[block_id]
        block.ref_count += 1
