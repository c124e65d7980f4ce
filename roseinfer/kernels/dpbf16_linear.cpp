// bf16 linear layers on AVX512-BF16 CPUs without AMX (AMD Zen 4 and 5, Intel Cooper Lake, Intel
// Xeons whose AMX a hypervisor hides): y = x @ w.T + bias for bf16 x and w, fp32 sums by
// vdpbf16ps, which multiplies 32 bf16 pairs per instruction: on AMD twice the products of an
// fp32 FMA; on Intel half, so there the same packed pairs are widened for FMAs
// (`bf16_pairs_by_fma`, `row_tile_fma`). oneDNN's bf16 matmul uses the same
// instruction but spends tens of microseconds setting up each call (121 calls per step) and
// reaches a third less of the multiplies' peak at decode sizes (8-64 rows); this streams
// weights prepacked once, each read from memory once per call.
//
// Packed weight w [N, K] (N % 16 == 0, K even): 16-output tiles, tile n holding w[16 n + o][2 p + j]
// at [p][o][j], so one 64-byte load is inputs 2p and 2p + 1 of 16 outputs, the pair vdpbf16ps
// sums; x's pair of those inputs is one 32-bit broadcast. A task's kTiles tiles (the last task's:
// what is left) are interleaved pair by pair, [K/2][tiles][16][2], so that each thread's run of
// tasks is one sequential stream (as vnni_int8_linear's; BENCHMARKS.md, session 27). Shape
// [N / 16, K / 2, 16, 2].
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "ops.h"
#include "parallel.h"
#include "tile_tasks.h"
#include "vec.h"

namespace roseinfer {

#if defined(__AVX512BF16__) && defined(__AVX512BW__)
namespace {

constexpr int kTiles = 3;  // 16-output tiles per task (48 outputs)
constexpr int kRows = 8;   // rows of x per register tile: 8 x 3 sums, 3 weights, 1 broadcast

// The lines a row tile asks for as it goes: at pair p, `per_pair` lines from line
// floor(p * rate / 2^32) of `base` on (none where per_pair is 0); into L2, or as lines read once
// (`once`: no later row tile reads them).
struct Fetch {
  const char* base = nullptr;
  uint64_t rate = 0;  // lines per pair, times 2^32
  int per_pair = 0;
  bool once = false;

  // Asks for pair p's lines.
  void ask(int64_t p) const {
    const char* line = base + ((static_cast<uint64_t>(p) * rate) >> 32) * 64;
    if (once)
      for (int i = 0; i < per_pair; ++i) prefetch_once(line + 64 * i);
    else
      for (int i = 0; i < per_pair; ++i) prefetch_l2(line + 64 * i);
  }
};

// acc[r][t] = sum over `pairs` pairs p of x[r] . w[t] for R rows of x (rows `x_stride` pairs
// apart) and the T weight tiles of one task at `w` ([pairs][T][16] pairs, each pair a 64-byte zmm
// of 16 outputs), asking for `fetch`'s lines as it goes.
template <int R, int T>
inline void row_tile(const uint32_t* x, int64_t x_stride, const uint32_t* w, int64_t pairs,
                     const Fetch& fetch, __m512* acc) {
  __m512 sum[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) sum[r][t] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p) {
    fetch.ask(p);
    __m512bh wv[T];
    for (int t = 0; t < T; ++t)
      wv[t] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(w + (p * T + t) * 16));
    for (int r = 0; r < R; ++r) {
      const __m512bh xv = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(x[r * x_stride + p])));
      for (int t = 0; t < T; ++t) sum[r][t] = _mm512_dpbf16_ps(sum[r][t], xv, wv[t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r * T + t] = sum[r][t];
}

// acc += a * b (vfmadd231ps), acc updated in its register: as `dpbusd_into`, an asm statement,
// since with 8 x 3 sums GCC 12 kept a third of them on the stack and copied the rest between
// registers at every pair.
inline void fma_into(__m512& acc, __m512 a, __m512 b) {
  asm("vfmadd231ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
}

// The same sums by fp32 FMAs, for CPUs whose vdpbf16ps runs at half their FMAs' products
// (`bf16_pairs_by_fma`): each 64-byte load widened to inputs 2p and 2p + 1 of 16 outputs (a shift
// and a mask), against x's rows as fp32 (`xt`, rows `x_stride` floats apart: `widen_rows`),
// broadcast from memory. The products are exact in fp32 and summed one by one, where
// vdpbf16ps sums a pair first: the results differ in the last bits, not in accuracy.
template <int R, int T>
inline void row_tile_fma(const float* xt, int64_t x_stride, const uint32_t* w, int64_t pairs,
                         const Fetch& fetch, __m512* acc) {
  __m512 sum[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) sum[r][t] = _mm512_setzero_ps();
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  for (int64_t p = 0; p < pairs; ++p) {
    fetch.ask(p);
    // Each weight load twice (the second from L1), so that the sums, 3 widened weights and a
    // broadcast stay in registers.
    const uint32_t* wp = w + p * T * 16;
    const float* x0 = xt + 2 * p;
    __m512 wi[T];
    for (int t = 0; t < T; ++t)
      wi[t] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_loadu_si512(wp + t * 16), 16));
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_set1_ps(x0[r * x_stride]);
      for (int t = 0; t < T; ++t) fma_into(sum[r][t], xv, wi[t]);
    }
    for (int t = 0; t < T; ++t)
      wi[t] = _mm512_castsi512_ps(_mm512_and_si512(_mm512_loadu_si512(wp + t * 16), high));
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_set1_ps(x0[r * x_stride + 1]);
      for (int t = 0; t < T; ++t) fma_into(sum[r][t], xv, wi[t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r * T + t] = sum[r][t];
}

// R rows of x against a task's T tiles: by vdpbf16ps on x's bf16 pairs `x` (rows `x_stride`
// pairs apart), or by FMAs on the same rows as fp32 (`xt` where not null, rows 2 x_stride floats
// apart: `widen_rows`).
template <int T>
inline void rows(int R, const uint32_t* x, int64_t x_stride, const float* xt,
                 const uint32_t* w, int64_t pairs, const Fetch& fetch, __m512* acc) {
  if (xt != nullptr) {
    switch (R) {
#define ROSEINFER_ROWS(n) \
  case n: row_tile_fma<n, T>(xt, 2 * x_stride, w, pairs, fetch, acc); return;
      ROSEINFER_ROWS(1) ROSEINFER_ROWS(2) ROSEINFER_ROWS(3) ROSEINFER_ROWS(4)
      ROSEINFER_ROWS(5) ROSEINFER_ROWS(6) ROSEINFER_ROWS(7) ROSEINFER_ROWS(8)
#undef ROSEINFER_ROWS
      default: TORCH_CHECK(false, "dpbf16_linear: a row tile of ", R, " rows");
    }
  }
  switch (R) {
#define ROSEINFER_ROWS(n) \
  case n: row_tile<n, T>(x, x_stride, w, pairs, fetch, acc); break;
    ROSEINFER_ROWS(1) ROSEINFER_ROWS(2) ROSEINFER_ROWS(3) ROSEINFER_ROWS(4)
    ROSEINFER_ROWS(5) ROSEINFER_ROWS(6) ROSEINFER_ROWS(7) ROSEINFER_ROWS(8)
#undef ROSEINFER_ROWS
    default: TORCH_CHECK(false, "dpbf16_linear: a row tile of ", R, " rows");
  }
}

// n parts of near-equal size covering `total`: part i's size (the first `total % n` one more).
inline int64_t part_size(int64_t total, int64_t n, int64_t i) {
  return total / n + (i < total % n ? 1 : 0);
}

// How many row tiles `run_task` cuts M rows of x into (near-equal sizes, `part_size`).
inline int64_t row_tile_count(int64_t M) { return (M + kRows - 1) / kRows; }

// The n values of x widened to fp32 at xt, shared among the threads from 32K values (a decode
// step's few rows stay on this thread).
inline void widen_rows(const c10::BFloat16* x, float* xt, int64_t n) {
  constexpr int64_t kGrain = 32 * 1024;
  parallel_for(0, (n + 15) / 16, kGrain / 16, [&](int64_t b, int64_t e) {
    const int64_t end = std::min(n, e * 16);
    int64_t i = b * 16;
    for (; i + 16 <= end; i += 16) _mm512_storeu_ps(xt + i, load16(x + i));
    for (; i < end; ++i) xt[i] = static_cast<float>(x[i]);
  });
}

// Where a call's outputs go: y [M, N] with tiles in order; or, for a gated projection's weights
// (`dpbf16_pack_gated`: tasks of gate tile j and up tile j, N = 2I), y [M, 2I] in order, or
// SiLU(gate) * up [M, I] with silu_mul.
struct Output {
  c10::BFloat16* y;
  int64_t N;
  bool gated, silu_mul;

  // The column of tile t of the task at packed column n (the bias's index too).
  int64_t column(int64_t n, int t) const { return gated ? t * (N / 2) + n / 2 : n + 16 * t; }

  // One row of a task's T tiles, as fp32 sums + bias: rounded once to bf16 (as F.linear), and a
  // gated pair through SiLU·mul (bit for bit `silu_and_mul` of the stored linear).
  template <int T>
  void store(int64_t row, int64_t n, const __m512* out) const {
    using BF16 = c10::BFloat16;
    if constexpr (T == 2) {
      if (silu_mul) {
        store16(y + row * (N / 2) + n / 2, silu_mul16<BF16>(round16<BF16>(out[0]), round16<BF16>(out[1])));
        return;
      }
    }
    for (int t = 0; t < T; ++t) store16(y + row * N + column(n, t), out[t]);
  }
};

// The task at packed column n (its T tiles' outputs) for every row of x: row tiles of
// near-equal size (16 rows run 8 + 8, not 12 + 4: too few sums would leave vdpbf16ps's latency
// showing), each over all of K, the task's weights read from memory by the first tile and from
// L2 by the others (blocking K so that every tile reads them from L1 measured no faster). The
// first tile asks for its stream ahead of its loads. From 3 tiles the others ask for `next` (the
// weights of the thread's next task, `next_bytes` of them, or null), a share each, so that memory
// streams while they multiply instead of only during the first tile (-14 to -16 % at 24-32 rows
// with the weights in DRAM; at 2 tiles the second would ask for as much as the first reads, and
// measured 1 % slower: BENCHMARKS.md, session 39).
template <int T>
void run_task(const c10::BFloat16* x, const float* xt, const uint32_t* w,
              const c10::BFloat16* bias, const Output& y, int64_t M, int64_t K, int64_t n,
              const uint32_t* next, int64_t next_bytes) {
  const int64_t pairs = K / 2;
  const uint32_t* wt = w + (n / 16) * pairs * 16;  // the task's tiles: the tasks before it hold n / 16
  // 4 KB ahead at 1-2 rows, 8 KB from 3: each was the faster of the two over this layout, by 3-23 %
  // at 1-2 rows and by 2-11 % at 4-64 (BENCHMARKS.md, session 27).
  const int64_t ahead = M <= 2 ? 4096 : 8192;
  const auto* xp = reinterpret_cast<const uint32_t*>(x);
  const int64_t tiles = row_tile_count(M);
  // T lines a pair; read once where one row tile takes every row (up to 8), on a CPU where that
  // pays: one-row steps in a row 4-5 % faster, 8 rows 3-4 % (BENCHMARKS.md, session 44).
  const Fetch own{reinterpret_cast<const char*>(wt) + ahead, uint64_t{T} << 32, T,
                  tiles == 1 && prefetch_once_pays()};
  // Each later tile's share of the next task's lines, spread over its pairs.
  const int64_t share = tiles >= 3 && next != nullptr ? (next_bytes / 64 + tiles - 2) / (tiles - 1) : 0;
  const auto next_share = [&](int64_t i) {  // tile i's (i >= 1)
    return Fetch{reinterpret_cast<const char*>(next) + (i - 1) * share * 64,
                 (static_cast<uint64_t>(share) << 32) / pairs,
                 static_cast<int>((share + pairs - 1) / pairs)};
  };
  __m512 acc[kRows * T];
  for (int64_t i = 0, m = 0; i < tiles; ++i) {
    const int R = static_cast<int>(part_size(M, tiles, i));
    rows<T>(R, xp + m * pairs, pairs, xt == nullptr ? nullptr : xt + m * K, wt, pairs,
            i == 0 ? own : next_share(i), acc);
    for (int r = 0; r < R; ++r) {
      if (bias != nullptr)
        for (int t = 0; t < T; ++t)
          acc[r * T + t] = _mm512_add_ps(acc[r * T + t], load16(bias + y.column(n, t)));
      y.store<T>(m + r, n, acc + r * T);
    }
    m += R;
  }
}

}  // namespace

bool dpbf16_linear_available() { return true; }

at::Tensor dpbf16_pack_weight(at::Tensor w) {
  TORCH_CHECK(w.dim() == 2 && w.scalar_type() == at::kBFloat16,
              "dpbf16_pack_weight: w must be bf16 [N, K]");
  const int64_t N = w.size(0), K = w.size(1);
  TORCH_CHECK(N % 16 == 0 && K % 2 == 0, "dpbf16_pack_weight: needs N % 16 == 0 and K even, got [",
              N, ", ", K, "]");
  return pack_tile_tasks(w, 2, kTiles);
}

namespace {

// y = x @ w.T + bias over weights packed by `dpbf16_pack_weight`, or by `dpbf16_pack_gated`
// with `gated` (then y is [M, 2I] in order, or SiLU(gate) * up [M, I] with `silu_mul`).
at::Tensor run_linear(const char* name, const at::Tensor& x, const at::Tensor& packed,
                         const c10::optional<at::Tensor>& bias, bool gated, bool silu_mul,
                         const c10::optional<at::Tensor>& out) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && x.scalar_type() == at::kBFloat16, name,
              ": x must be contiguous bf16 [M, K]");
  TORCH_CHECK(packed.dim() == 4 && packed.scalar_type() == at::kBFloat16 && packed.size(2) == 16 &&
                  packed.size(3) == 2 && packed.is_contiguous(),
              name, ": packed must come from ", gated ? "dpbf16_pack_gated" : "dpbf16_pack_weight");
  const int64_t M = x.size(0), K = x.size(1), N = packed.size(0) * 16;
  TORCH_CHECK(packed.size(1) * 2 == K, name, ": x has ", K, " inputs, the weights ",
              packed.size(1) * 2);
  TORCH_CHECK(!gated || N % 32 == 0, name, ": a gated projection has 2I outputs, I % 16 == 0");
  if (bias.has_value())
    TORCH_CHECK(bias->is_contiguous() && bias->numel() == N && bias->scalar_type() == at::kBFloat16,
                name, ": bias must be bf16 [N]");
  auto y = output_tensor(out, {M, silu_mul ? N / 2 : N}, x.options(), x, name);
  if (M == 0) return y;
  const auto* xp = x.data_ptr<c10::BFloat16>();
  const auto* wp = reinterpret_cast<const uint32_t*>(packed.data_ptr<c10::BFloat16>());
  const c10::BFloat16* bp = bias.has_value() ? bias->data_ptr<c10::BFloat16>() : nullptr;
  const Output output{y.data_ptr<c10::BFloat16>(), N, gated, silu_mul};
  // x as fp32 for the FMAs, where they take the products: in this thread's scratch, kept at its
  // largest call's size (a one-row decode step makes ~120 such calls; a 2,048-token prefill
  // chunk's widest x is 12.6 MB). Row-major: widening it is a vector loop over x, where the
  // [K][R] copy per row tile of session 61 was a scalar transpose (the step's down projections
  // 9-15 % slower with it: BENCHMARKS.md, session 62).
  thread_local std::vector<float> x_fp32;
  const float* xt = nullptr;
  if (bf16_pairs_by_fma()) {
    x_fp32.resize(static_cast<size_t>(M * K));
    widen_rows(xp, x_fp32.data(), M * K);
    xt = x_fp32.data();
  }
  // Tasks of kTiles tiles, or a gated projection's pairs.
  const int64_t tiles = N / 16, task_tiles = gated ? 2 : kTiles;
  const int64_t tasks = (tiles + task_tiles - 1) / task_tiles;
  const auto task_tile_count = [&](int64_t t) { return std::min(task_tiles, tiles - t * task_tiles); };
  parallel_for(0, tasks, 1, [&](int64_t t0, int64_t t1, int64_t share_end) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t * task_tiles * 16;
      // The thread's next task (in its share, maybe its next chunk): its weights follow these.
      const bool last = t + 1 >= share_end;
      const uint32_t* next = last ? nullptr : wp + (n + task_tiles * 16) / 16 * (K / 2) * 16;
      const int64_t next_bytes = last ? 0 : task_tile_count(t + 1) * 16 * (K / 2) * 4;
      switch (task_tile_count(t)) {
        case 1: run_task<1>(xp, xt, wp, bp, output, M, K, n, next, next_bytes); break;
        case 2: run_task<2>(xp, xt, wp, bp, output, M, K, n, next, next_bytes); break;
        default: run_task<kTiles>(xp, xt, wp, bp, output, M, K, n, next, next_bytes); break;
      }
    }
  });
  return y;
}

}  // namespace

at::Tensor dpbf16_linear(at::Tensor x, at::Tensor packed,
                            c10::optional<at::Tensor> bias, c10::optional<at::Tensor> out) {
  return run_linear("dpbf16_linear", x, packed, bias, false, false, out);
}

at::Tensor dpbf16_pack_gated(at::Tensor w) {
  TORCH_CHECK(w.dim() == 2 && w.scalar_type() == at::kBFloat16 && w.size(1) % 2 == 0,
              "dpbf16_pack_gated: w must be bf16 [2I, K], K even");
  return pack_gated_tile_tasks(w, 2);
}

at::Tensor dpbf16_gated_linear(at::Tensor x, at::Tensor packed,
                                  c10::optional<at::Tensor> bias, bool silu_mul,
                                  c10::optional<at::Tensor> out) {
  return run_linear("dpbf16_gated_linear", x, packed, bias, true, silu_mul, out);
}

#else  // no AVX512-BF16: bf16 linears keep small_batch_linear and oneDNN

bool dpbf16_linear_available() { return false; }

at::Tensor dpbf16_pack_weight(at::Tensor) {
  TORCH_CHECK(false, "dpbf16_pack_weight: built without AVX512-BF16");
}

at::Tensor dpbf16_linear(at::Tensor, at::Tensor, c10::optional<at::Tensor>,
                            c10::optional<at::Tensor>) {
  TORCH_CHECK(false, "dpbf16_linear: built without AVX512-BF16");
}

at::Tensor dpbf16_pack_gated(at::Tensor) {
  TORCH_CHECK(false, "dpbf16_pack_gated: built without AVX512-BF16");
}

at::Tensor dpbf16_gated_linear(at::Tensor, at::Tensor, c10::optional<at::Tensor>, bool,
                                  c10::optional<at::Tensor>) {
  TORCH_CHECK(false, "dpbf16_gated_linear: built without AVX512-BF16");
}

#endif

}  // namespace roseinfer
