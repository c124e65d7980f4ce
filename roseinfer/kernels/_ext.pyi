# Types of the C++ extension `load_cpu_kernels` builds (roseinfer/kernels/bindings.cpp).
# There is no `roseinfer.kernels._ext` module at run time: the extension is JIT-built under its
# own name. Code imports these names under TYPE_CHECKING only, to type its seams.
# The entries the decoder stack calls take `out`: a contiguous tensor of the output's shape and
# dtype, written and returned instead of a new one.

from typing import Protocol

from torch import Tensor

class DecodeLinear:
    """A linear layer's decode kernel and prepared weights. kind: "amx", "dpbf16", "small_batch",
    "int8", "amx_int8", "vnni_int8", "dense", or a gated projection's "dpbf16_gated",
    "vnni_int8_gated", "amx_gated" and "amx_int8_gated" (roseinfer/kernels/decode_stack.h);
    "small_batch" and "int8" run aten's fp32 linear on more than `kernel_rows` rows, the weight
    widened to fp32 for the call; "small_batch" with `packed` (an fp32 weight as
    `torch.ops.mkldnn._reorder_linear_weight` packs it) runs oneDNN's matmul there instead.
    Other kinds with `few_rows` (another kind over its own copy of the weights) run up to
    `kernel_rows` rows through it."""

    def __init__(
        self,
        kind: str,
        weight: Tensor,
        scale: Tensor | None = None,
        bias: Tensor | None = None,
        kernel_rows: int = ...,
        packed: Tensor | None = None,
        few_rows: DecodeLinear | None = None,
    ) -> None: ...
    def __call__(self, x: Tensor, out: Tensor | None = None) -> Tensor: ...  # [M, K] -> [M, N]
    # [M, K] -> [M, N/2]: silu_and_mul(self(x))
    def silu_mul(self, x: Tensor, out: Tensor | None = None) -> Tensor: ...
    @property
    def out_features(self) -> int: ...  # N

class DecodeLayer:
    def __init__(
        self,
        input_norm: Tensor,  # [hidden]
        post_norm: Tensor,  # [hidden]
        qkv: DecodeLinear,
        o_proj: DecodeLinear,
        gate_up_proj: DecodeLinear,
        down_proj: DecodeLinear,
        q_norm: Tensor | None = None,  # [D] (Qwen3), with k_norm
        k_norm: Tensor | None = None,
    ) -> None: ...

class DecodeStack:
    def __init__(
        self,
        embedding: Tensor,  # [vocab, hidden]
        layers: list[DecodeLayer],
        final_norm: Tensor,  # [hidden]
        eps: float,
        num_heads: int,
        num_kv_heads: int,
        head_dim: int,
        scale: float,
    ) -> None: ...
    def forward(
        self,
        input_ids: Tensor,  # [N] int64
        positions: Tensor,  # [N] int64
        cos: Tensor,  # [max_positions, D/2], the rows at `positions` taken
        sin: Tensor,  # [max_positions, D/2]
        k_caches: list[Tensor],  # per layer [num_blocks, KVH, block_size, D]
        v_caches: list[Tensor],
        k_scales: list[Tensor],  # per layer [num_blocks, KVH, block_size] (int8 caches), or []
        v_scales: list[Tensor],
        slot_mapping: Tensor,  # [N]
        block_tables: Tensor,  # [N, max_blocks]
        context_lens: Tensor,  # [N]
    ) -> Tensor: ...  # the final norm's output [N, hidden]
    @property
    def one_region_rows(self) -> int: ...  # steps of up to this many tokens: one parallel region

class CppKernels(Protocol):
    """The extension module, as a protocol so that signatures can name it."""

    DecodeLinear: type[DecodeLinear]
    DecodeLayer: type[DecodeLayer]
    DecodeStack: type[DecodeStack]

    def paged_decode_attention(
        self,
        q: Tensor,  # [n, H, D]
        k: Tensor,  # [n, KVH, D] written into the cache first
        v: Tensor,
        k_cache: Tensor,  # [num_blocks, KVH, block_size, D]
        v_cache: Tensor,
        slot_mapping: Tensor,  # [n]
        block_tables: Tensor,  # [n, max_blocks]
        context_lens: Tensor,  # [n]
        scale: float,
        k_scale: Tensor | None = None,  # [num_blocks, KVH, block_size] for int8 caches
        v_scale: Tensor | None = None,
        out: Tensor | None = None,
    ) -> Tensor: ...  # [n, H, D]
    def paged_decode_attention_qkv(
        self,
        qkv: Tensor,  # [n, (H + 2 KVH) * D]: q, k (written into the cache first), v
        cos: Tensor,  # [n, D / 2]: q and k rotated on the way, qkv left as it is
        sin: Tensor,
        num_heads: int,
        k_cache: Tensor,
        v_cache: Tensor,
        slot_mapping: Tensor,
        block_tables: Tensor,
        context_lens: Tensor,
        scale: float,
        k_scale: Tensor | None = None,
        v_scale: Tensor | None = None,
        out: Tensor | None = None,
    ) -> Tensor: ...  # [n, H, D]
    def rms_norm(
        self, x: Tensor, weight: Tensor, eps: float, out: Tensor | None = None
    ) -> Tensor: ...
    def add_rms_norm(
        self, x: Tensor, residual: Tensor, weight: Tensor, eps: float, out: Tensor | None = None
    ) -> Tensor: ...
    def rotary_embedding(self, q: Tensor, k: Tensor, cos: Tensor, sin: Tensor) -> None: ...
    def silu_and_mul(self, x: Tensor, out: Tensor | None = None) -> Tensor: ...  # [N, 2I] -> [N, I]
    def int8_linear(
        self,
        x: Tensor,
        weight: Tensor,
        scale: Tensor,
        bias: Tensor | None = None,
        out: Tensor | None = None,
    ) -> Tensor: ...
    def small_batch_linear(
        self, x: Tensor, weight: Tensor, bias: Tensor | None = None, out: Tensor | None = None
    ) -> Tensor: ...
    def vector_lanes(self) -> int: ...  # 16 (AVX-512), 8 (AVX2) or 0 (scalar loops)
    # whether weights read once are asked for with prefetchnta (AMD, or $ROSEINFER_PREFETCH_ONCE)
    def prefetch_once_pays(self) -> bool: ...
    # whether dpbf16_linear multiplies by fp32 FMAs (Intel, or $ROSEINFER_BF16_PAIRS)
    def bf16_pairs_by_fma(self) -> bool: ...
    def int8_dequantize(self, weight: Tensor, scale: Tensor) -> Tensor: ...  # [N, K] fp32
    def amx_linear_available(self) -> bool: ...
    def amx_pack_weight(self, weight: Tensor) -> Tensor: ...  # [N, K] -> [N/16, K/32, 16, 32]
    def amx_linear(
        self, x: Tensor, packed: Tensor, bias: Tensor | None = None, out: Tensor | None = None
    ) -> Tensor: ...
    def write_kv_cache(
        self,
        k: Tensor,  # [n, KVH, D], heads contiguous
        v: Tensor,
        k_cache: Tensor,  # [blocks, KVH, block_size, D] k's dtype or int8
        v_cache: Tensor,
        slot_mapping: Tensor,  # [n] int64
        k_scale: Tensor | None = None,  # [blocks, KVH, block_size] fp32 with an int8 cache
        v_scale: Tensor | None = None,
    ) -> None: ...
    def paged_prefill_attention(
        self,
        q: Tensor,  # [n, H, D] the prefill chunks' queries, sequence after sequence
        k_cache: Tensor,  # [blocks, KVH, block_size, D] q's dtype or int8, the chunks' K/V in it
        v_cache: Tensor,
        block_tables: Tensor,  # [S, max_blocks] int64
        query_start_loc: Tensor,  # [S + 1] int64, from 0 to n
        context_lens: Tensor,  # [S] int64: cached + new tokens
        scale: float,
        k_scale: Tensor | None = None,  # [blocks, KVH, block_size] fp32 with an int8 cache
        v_scale: Tensor | None = None,
        # "auto": AMX's tile, else AVX512-BF16's pairs, else fp32 ("amx_emulated": AMX's tile
        # on plain C++ tiles, for tests on CPUs without AMX)
        tile: str = "auto",
    ) -> Tensor: ...  # [n, H, D]
    def paged_prefill_tile(self, q: Tensor, k_cache: Tensor, tile: str = "auto") -> str: ...
    def argmax_rows(self, logits: Tensor) -> tuple[Tensor, Tensor]: ...  # [B] int64, [B] fp32
    def apply_token_bitmask(self, logits: Tensor, bitmask: Tensor, rows: Tensor) -> None: ...
    def logsumexp_rows(self, logits: Tensor) -> Tensor: ...  # [B] fp32
    def count_greater_rows(self, logits: Tensor, values: Tensor) -> Tensor: ...  # [B] int64
    def top_candidates_rows(  # [B, m] fp32, [B, m] int64
        self, logits: Tensor, m: int
    ) -> tuple[Tensor, Tensor]: ...
    def sample_candidates_rows(self, weights: Tensor, ids: Tensor, u: Tensor) -> Tensor: ...  # [C]
    # [n] int64: the thread of one region that ran each index, one thread stalling (the tests')
    def region_loop_threads(
        self, n: int, grain: int, pieces_per_share: int, stalled_thread: int
    ) -> Tensor: ...
    # ns per empty loop handed between one region's threads; NaN without a region
    def region_handoff_ns(self, loops: int = 2000) -> float: ...
    def amx_int8_linear_available(self) -> bool: ...
    def amx_int8_linear(
        self,
        x: Tensor,
        packed: Tensor,
        scale: Tensor,
        bias: Tensor | None = None,
        out: Tensor | None = None,
    ) -> Tensor: ...
    # [2I, K] (bf16 or int8) -> [2I/16, K/32, 16, 32], gate block j then up block j
    def amx_pack_gated(self, weight: Tensor) -> Tensor: ...
    def amx_gated_linear(
        self,
        x: Tensor,
        packed: Tensor,
        scale: Tensor | None = None,  # int8 weights' [2I]; bf16 weights take none
        bias: Tensor | None = None,
        silu_mul: bool = False,
        out: Tensor | None = None,
    ) -> Tensor: ...
    def vnni_int8_linear_available(self) -> bool: ...
    # int8 [N, K] -> [N/16, K/4, 16, 4], the tiles interleaved by task
    def vnni_pack_weight(self, weight: Tensor) -> Tensor: ...
    def vnni_int8_linear(
        self,
        x: Tensor,
        packed: Tensor,
        scale: Tensor,
        bias: Tensor | None = None,
        out: Tensor | None = None,
    ) -> Tensor: ...
    def dpbf16_linear_available(self) -> bool: ...
    # bf16 [N, K] -> [N/16, K/2, 16, 2], the tiles interleaved by task
    def dpbf16_pack_weight(self, weight: Tensor) -> Tensor: ...
    def dpbf16_linear(
        self, x: Tensor, packed: Tensor, bias: Tensor | None = None, out: Tensor | None = None
    ) -> Tensor: ...
    # a gated projection's [2I, K] = [gate; up] in tasks of (gate tile j, up tile j)
    def vnni_pack_gated(self, weight: Tensor) -> Tensor: ...
    def vnni_int8_gated_linear(  # [M, 2I], or SiLU(gate) * up [M, I] with silu_mul
        self,
        x: Tensor,
        packed: Tensor,
        scale: Tensor,
        bias: Tensor | None = None,
        silu_mul: bool = False,
        out: Tensor | None = None,
    ) -> Tensor: ...
    def dpbf16_pack_gated(self, weight: Tensor) -> Tensor: ...
    def dpbf16_gated_linear(
        self,
        x: Tensor,
        packed: Tensor,
        bias: Tensor | None = None,
        silu_mul: bool = False,
        out: Tensor | None = None,
    ) -> Tensor: ...
