// bf16 linear layers on AVX512-BF16 CPUs without AMX (AMD Zen 4 and 5, Intel Cooper Lake):
// y = x @ w.T + bias for bf16 x and w, fp32 sums by vdpbf16ps, which multiplies 32 bf16 pairs
// per instruction: twice the products of an fp32 FMA. oneDNN's bf16 matmul uses the same
// instruction but spends tens of microseconds setting up each call (121 calls per step) and
// reaches a third less of the multiplies' peak at decode sizes (8-64 rows); this streams
// weights prepacked once, each read from memory once per call.
//
// Packed weight w [N, K] (N % 16 == 0, K even): [N / 16, K / 2, 16, 2], tile n holding
// w[16 n + o][2 p + j] at [p][o][j], so one 64-byte load is inputs 2p and 2p + 1 of 16 outputs,
// the pair vdpbf16ps sums; x's pair of those inputs is one 32-bit broadcast.
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>

#include "ops.h"
#include "vec.h"

namespace roseinfer {

#if defined(__AVX512BF16__) && defined(__AVX512BW__)
namespace {

constexpr int kTiles = 3;  // 16-output tiles per task (48 outputs)
constexpr int kRows = 8;   // rows of x per register tile: 8 x 3 sums, 3 weights, 1 broadcast

// acc[r][t] = sum over `pairs` pairs p of x[r] . w[t] for R rows of x (rows `x_stride` pairs
// apart) and T weight tiles (`tile_stride` pairs apart; each pair a 64-byte zmm of 16 outputs).
template <int R, int T>
inline void row_tile(const uint32_t* x, int64_t x_stride, const uint32_t* w, int64_t tile_stride,
                     int64_t pairs, __m512* acc) {
  __m512 sum[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) sum[r][t] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p) {
    __m512bh wv[T];
    for (int t = 0; t < T; ++t) {
      const uint32_t* tile = w + t * tile_stride + p * 16;
      // 4 KB ahead in each tile's stream into L2, for the first row tile (the others read L2):
      // 5-9 % faster at 1-32 rows than 2 KB into L1, or 8 KB (BENCHMARKS.md, session 25).
      prefetch_l2(tile + 1024);
      wv[t] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(tile));
    }
    for (int r = 0; r < R; ++r) {
      const __m512bh xv = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(x[r * x_stride + p])));
      for (int t = 0; t < T; ++t) sum[r][t] = _mm512_dpbf16_ps(sum[r][t], xv, wv[t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r * T + t] = sum[r][t];
}

template <int T>
inline void rows(int R, const uint32_t* x, int64_t x_stride, const uint32_t* w,
                 int64_t tile_stride, int64_t pairs, __m512* acc) {
  switch (R) {
#define ROSEINFER_ROWS(n) \
  case n: row_tile<n, T>(x, x_stride, w, tile_stride, pairs, acc); break;
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

// y[:, n .. n + 16 T) for every row of x: row tiles of near-equal size (16 rows run 8 + 8, not
// 12 + 4: too few sums would leave vdpbf16ps's latency showing), each over all of K, the task's
// weights read from memory by the first tile and from L2 by the others (blocking K so that every
// tile reads them from L1 measured no faster). fp32 sums + bias, rounded once to bf16, as
// F.linear.
template <int T>
void run_task(const c10::BFloat16* x, const uint32_t* w, const c10::BFloat16* bias,
              c10::BFloat16* y, int64_t M, int64_t K, int64_t N, int64_t n) {
  const int64_t pairs = K / 2, tile_stride = pairs * 16;
  const uint32_t* wt = w + (n / 16) * tile_stride;
  const auto* xp = reinterpret_cast<const uint32_t*>(x);
  const int64_t tiles = (M + kRows - 1) / kRows;
  __m512 acc[kRows * T];
  for (int64_t i = 0, m = 0; i < tiles; ++i) {
    const int R = static_cast<int>(part_size(M, tiles, i));
    rows<T>(R, xp + m * pairs, pairs, wt, tile_stride, pairs, acc);
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < T; ++t) {
        const int64_t c = n + 16 * t;
        __m512 out = acc[r * T + t];
        if (bias != nullptr) out = _mm512_add_ps(out, load16(bias + c));
        store16(y + (m + r) * N + c, out);
      }
    m += R;
  }
}

}  // namespace

bool dpbf16_linear_available() { return true; }

torch::Tensor dpbf16_pack_weight(torch::Tensor w) {
  TORCH_CHECK(w.dim() == 2 && w.scalar_type() == at::kBFloat16,
              "dpbf16_pack_weight: w must be bf16 [N, K]");
  const int64_t N = w.size(0), K = w.size(1);
  TORCH_CHECK(N % 16 == 0 && K % 2 == 0, "dpbf16_pack_weight: needs N % 16 == 0 and K even, got [",
              N, ", ", K, "]");
  return w.view({N / 16, 16, K / 2, 2}).permute({0, 2, 1, 3}).contiguous();
}

torch::Tensor dpbf16_linear(torch::Tensor x, torch::Tensor packed,
                            c10::optional<torch::Tensor> bias) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && x.scalar_type() == at::kBFloat16,
              "dpbf16_linear: x must be contiguous bf16 [M, K]");
  TORCH_CHECK(packed.dim() == 4 && packed.scalar_type() == at::kBFloat16 && packed.size(2) == 16 &&
                  packed.size(3) == 2 && packed.is_contiguous(),
              "dpbf16_linear: packed must come from dpbf16_pack_weight");
  const int64_t M = x.size(0), K = x.size(1), N = packed.size(0) * 16;
  TORCH_CHECK(packed.size(1) * 2 == K, "dpbf16_linear: x has ", K, " inputs, the weights ",
              packed.size(1) * 2);
  if (bias.has_value())
    TORCH_CHECK(bias->is_contiguous() && bias->numel() == N && bias->scalar_type() == at::kBFloat16,
                "dpbf16_linear: bias must be bf16 [N]");
  auto y = torch::empty({M, N}, x.options());
  if (M == 0) return y;
  const auto* xp = x.data_ptr<c10::BFloat16>();
  const auto* wp = reinterpret_cast<const uint32_t*>(packed.data_ptr<c10::BFloat16>());
  const c10::BFloat16* bp = bias.has_value() ? bias->data_ptr<c10::BFloat16>() : nullptr;
  auto* yp = y.data_ptr<c10::BFloat16>();
  const int64_t tiles = N / 16, tasks = (tiles + kTiles - 1) / kTiles;
  at::parallel_for(0, tasks, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t * kTiles * 16;
      switch (std::min<int64_t>(kTiles, tiles - t * kTiles)) {
        case 1: run_task<1>(xp, wp, bp, yp, M, K, N, n); break;
        case 2: run_task<2>(xp, wp, bp, yp, M, K, N, n); break;
        default: run_task<kTiles>(xp, wp, bp, yp, M, K, N, n); break;
      }
    }
  });
  return y;
}

#else  // no AVX512-BF16: bf16 linears keep small_batch_linear and oneDNN

bool dpbf16_linear_available() { return false; }

torch::Tensor dpbf16_pack_weight(torch::Tensor) {
  TORCH_CHECK(false, "dpbf16_pack_weight: built without AVX512-BF16");
}

torch::Tensor dpbf16_linear(torch::Tensor, torch::Tensor, c10::optional<torch::Tensor>) {
  TORCH_CHECK(false, "dpbf16_linear: built without AVX512-BF16");
}

#endif

}  // namespace roseinfer
