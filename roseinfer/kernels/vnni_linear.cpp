// int8 x int8 linear layers on AVX512-VNNI where AMX's bf16 kernel does not apply (CPUs without
// AMX such as AMD Zen 4 and Intel Ice Lake; fp32/fp16 models on AMX ones): the int8
// weights of `--quantization int8` times activations rounded to int8 per block of 64 inputs (as
// llama.cpp's q8_0 path does with blocks of 32), summed four products at a time by vpdpbusd. On
// these CPUs a bf16 linear at 32 rows is bound by its multiplies (vdpbf16ps: 32 per instruction),
// which vpdpbusd doubles (64); at one row both read the weights at memory speed.
//
// vpdpbusd multiplies unsigned by signed bytes, so the weights are stored plus 128 (1..255): each
// block's int32 sum then carries 128 * (sum of that block's int8 activations), which one
// correction per row takes off at the end.
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "ops.h"
#include "parallel.h"
#include "tile_tasks.h"
#include "vec.h"

namespace roseinfer {

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
namespace {

constexpr int64_t kBlock = 64;  // activations share one scale per 64 inputs
constexpr int kRows = 4;        // rows of x per register tile
constexpr int kTiles = 3;       // 16-output weight tiles: 4 x 3 int32 sums + 3 weight zmm

// x [M, K] -> int8 [M, K], a scale per (row, block) [M, K/64] (`quantize_row` of each block)
// and, per row, the correction: the sum over blocks of 128 * scale * (sum of the block's q).
template <typename T>
void quantize_activations(const T* x, int64_t M, int64_t K, int8_t* q, float* scales,
                          float* correction) {
  const int64_t nb = K / kBlock;
  parallel_for(0, M, 1, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      float corr = 0.f;
      for (int64_t b = 0; b < nb; ++b) {
        float& scale = scales[m * nb + b];
        const float codes = quantize_row(x + m * K + b * kBlock, kBlock, q + m * K + b * kBlock, &scale);
        // A NaN scale (x held a NaN) makes the row's outputs NaN, as a matmul would.
        corr += 128.f * scale * codes;
      }
      correction[m] = corr;
    }
  });
}

// acc[r][t] += scale[r, b] * (int32 sum over block b) for R rows of x and the T weight tiles of
// one task, `w` pointing at the task's weights ([K/4][T][16][4], `vnni_pack_weight`); acc is
// [R][T] in memory (L1). `once`: no later row group reads these weights again.
template <int R, int T>
inline void block_tile(const int8_t* q, const float* scales, int64_t K, int64_t b,
                       const uint8_t* w, __m512* acc, bool once) {
  const int64_t nb = K / kBlock;
  __m512i sum[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) sum[r][t] = _mm512_setzero_si512();
  for (int64_t k = b * kBlock; k < (b + 1) * kBlock; k += 4) {
    __m512i wv[T];
    for (int t = 0; t < T; ++t) {
      const uint8_t* p = w + k * 16 * T + t * 64;
      // 4 KB ahead, at every row count: over this layout 9-11 % faster at 32 rows than 1-3 KB
      // into L1, which the tile-by-tile layout used beyond 8 rows (BENCHMARKS.md, session 27).
      // Read once (up to 32 rows), as such: one-row steps in a row 2-5 % faster, 32 rows ~1 %
      // (session 44); into L2 where later row groups read them again.
      if (once)
        prefetch_once(p + 4096);
      else
        prefetch_l2(p + 4096);
      wv[t] = _mm512_loadu_si512(p);
    }
    for (int r = 0; r < R; ++r) {
      int32_t four;  // x's 4 bytes for these inputs, broadcast
      std::memcpy(&four, q + r * K + k, sizeof(four));
      const __m512i xv = _mm512_set1_epi32(four);
      for (int t = 0; t < T; ++t) dpbusd_into(sum[r][t], wv[t], xv);
    }
  }
  for (int r = 0; r < R; ++r) {
    const __m512 s = _mm512_set1_ps(scales[r * nb + b]);
    for (int t = 0; t < T; ++t)
      acc[r * T + t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[r][t]), s, acc[r * T + t]);
  }
}

// One call's operands: the quantized x, the packed weights and the output.
template <typename Out>
struct Operands {
  const int8_t* q;           // [M, K]
  const float* scales;       // [M, K/64]
  const float* correction;   // [M]
  const uint8_t* w;          // N/16 tiles [K/4, 16, 4], interleaved by task (vnni_pack_weight)
  const Out* wscale;         // [N]
  const Out* bias;           // [N] or null
  Out* y;                    // [M, N], or [M, N/2] with silu_mul
  int64_t M, K, N;
  bool gated;     // tasks of (gate tile j, up tile j), N = 2I (vnni_pack_gated)
  bool silu_mul;  // gated: y = SiLU(gate) * up
};

// The output column of tile t of the task at packed column n: tiles in order, or a gated task's
// gate (16j) and up (I + 16j) tiles.
template <typename Out>
inline int64_t tile_column(const Operands<Out>& a, int64_t n, int t) {
  return a.gated ? t * (a.N / 2) + n / 2 : n + 16 * t;
}

// One row of a task's T output tiles into y: each at its column, or a gated task's two tiles,
// rounded as stored, through SiLU·mul (bit for bit `silu_and_mul` of the stored linear).
template <typename Out, int T>
inline void store_task_row(const Operands<Out>& a, int64_t row, int64_t n, const __m512* out) {
  if constexpr (T == 2) {
    if (a.silu_mul) {
      store16(a.y + row * (a.N / 2) + n / 2,
              silu_mul16<Out>(round16<Out>(out[0]), round16<Out>(out[1])));
      return;
    }
  }
  for (int t = 0; t < T; ++t) store16(a.y + row * a.N + tile_column(a, n, t), out[t]);
}

constexpr int64_t kGroupRows = 32;  // rows whose fp32 sums [32][T] stay in L1

// The task at packed column n (its T tiles' outputs) for all rows: block by block, each weight
// block serving kGroupRows rows of x (kRows at a time) while it is in L1; then (sum -
// correction) * weight scale, rounded to Out, then + bias (as int8_linear: the scaled product
// rounded, then the sum).
template <typename Out, int T>
void run_rows(const Operands<Out>& a, int64_t n) {
  const int64_t nb = a.K / kBlock;
  const uint8_t* w = a.w + (n / 16) * 16 * a.K;  // the task's tiles: the tasks before it hold n / 16
  __m512 acc[kGroupRows * T];
  // One group of rows reads each weight block, on a CPU where asking for that pays.
  const bool once = a.M <= kGroupRows && prefetch_once_pays();
  for (int64_t g0 = 0; g0 < a.M; g0 += kGroupRows) {
    const int64_t rows = std::min(kGroupRows, a.M - g0);
    for (int64_t i = 0; i < rows * T; ++i) acc[i] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const int8_t* q = a.q + g0 * a.K;
      const float* s = a.scales + g0 * nb;
      int64_t m = 0;
      for (; m + kRows <= rows; m += kRows)
        block_tile<kRows, T>(q + m * a.K, s + m * nb, a.K, b, w, acc + m * T, once);
      switch (rows - m) {
        case 1: block_tile<1, T>(q + m * a.K, s + m * nb, a.K, b, w, acc + m * T, once); break;
        case 2: block_tile<2, T>(q + m * a.K, s + m * nb, a.K, b, w, acc + m * T, once); break;
        case 3: block_tile<3, T>(q + m * a.K, s + m * nb, a.K, b, w, acc + m * T, once); break;
        default: break;
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      const __m512 corr = _mm512_set1_ps(a.correction[g0 + r]);
      __m512 out[T];
      for (int t = 0; t < T; ++t) {
        // Rounding given explicitly: the compiler never fuses these into an FMA, which it did
        // or did not for fp32 outputs depending on the task's tile count.
        constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
        const int64_t c = tile_column(a, n, t);
        const __m512 product = _mm512_mul_round_ps(_mm512_sub_ps(acc[r * T + t], corr),
                                                   load16(a.wscale + c), kNearest);
        out[t] = round16<Out>(product);
        if (a.bias != nullptr)
          out[t] = _mm512_add_round_ps(out[t], load16(a.bias + c), kNearest);
      }
      store_task_row<Out, T>(a, g0 + r, n, out);
    }
  }
}

}  // namespace

bool vnni_int8_linear_available() { return true; }

at::Tensor vnni_pack_weight(at::Tensor w) {
  TORCH_CHECK(w.dim() == 2 && w.scalar_type() == at::kChar, "vnni_pack_weight: w must be int8 [N, K]");
  const int64_t N = w.size(0), K = w.size(1);
  TORCH_CHECK(N % 16 == 0 && K % kBlock == 0, "vnni_pack_weight: needs N % 16 == 0 and K % 64 == 0, got [",
              N, ", ", K, "]");
  TORCH_CHECK(w.min().item<int8_t>() > -128, "vnni_pack_weight: weights must lie in [-127, 127]");
  // One 64-byte load holds 4 inputs of 16 outputs (a tile), as vpdpbusd sums them; a task's
  // kTiles tiles are interleaved 4 inputs at a time (tile_tasks.h).
  return pack_tile_tasks((w.to(at::kShort) + 128).to(at::kByte), 4, kTiles);
}

namespace {

// y = x @ w.T * scale + bias over the packed weights (`vnni_pack_weight`, or `vnni_pack_gated`
// with `gated`: then y is [M, 2I] in order, or SiLU(gate) * up [M, I] with `silu_mul`).
at::Tensor run_linear(const char* name, const at::Tensor& x, const at::Tensor& packed,
                         const at::Tensor& scale, const c10::optional<at::Tensor>& bias,
                         bool gated, bool silu_mul, const c10::optional<at::Tensor>& out) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), name, ": x must be contiguous [M, K]");
  TORCH_CHECK(packed.dim() == 4 && packed.scalar_type() == at::kByte && packed.size(2) == 16 &&
                  packed.size(3) == 4 && packed.is_contiguous(),
              name, ": packed must come from ", gated ? "vnni_pack_gated" : "vnni_pack_weight");
  const int64_t M = x.size(0), K = x.size(1), N = packed.size(0) * 16;
  TORCH_CHECK(packed.size(1) * 4 == K, name, ": x has ", K, " inputs, the weights ",
              packed.size(1) * 4);
  TORCH_CHECK(K % kBlock == 0, name, ": needs K % 64 == 0, got ", K);
  TORCH_CHECK(!gated || N % 32 == 0, name, ": a gated projection has 2I outputs, I % 16 == 0");
  TORCH_CHECK(scale.is_contiguous() && scale.numel() == N && scale.scalar_type() == x.scalar_type(),
              name, ": scale must be [N] in x's dtype");
  if (bias.has_value())
    TORCH_CHECK(bias->is_contiguous() && bias->numel() == N && bias->scalar_type() == x.scalar_type(),
                name, ": bias must be [N] in x's dtype");
  auto y = output_tensor(out, {M, silu_mul ? N / 2 : N}, x.options(), x, name);
  if (M == 0) return y;
  // The quantized x in this thread's scratch, not three tensors: a one-row decode step makes
  // 120 of these calls, and their allocations cost more than the quantizing (BENCHMARKS.md,
  // session 27). It keeps the largest call's size (a prefill chunk's: a few MB).
  thread_local std::vector<int8_t> q;
  thread_local std::vector<float> scales, correction;
  q.resize(M * K);
  scales.resize(M * (K / kBlock));
  correction.resize(M);
  auto run = [&](auto tag) {
    using Out = decltype(tag);
    const Operands<Out> a{q.data(),
                          scales.data(),
                          correction.data(),
                          packed.data_ptr<uint8_t>(),
                          scale.data_ptr<Out>(),
                          bias.has_value() ? bias->data_ptr<Out>() : nullptr,
                          y.data_ptr<Out>(),
                          M, K, N, gated, silu_mul};
    quantize_activations(x.data_ptr<Out>(), M, K, q.data(), scales.data(), correction.data());
    // Tasks of kTiles tiles (48 outputs), or a gated projection's pairs; every row of x reuses a
    // task's weights from L1/L2.
    const int64_t tiles = N / 16, task_tiles = gated ? 2 : kTiles;
    const int64_t tasks = (tiles + task_tiles - 1) / task_tiles;
    parallel_for(0, tasks, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t n = t * task_tiles * 16;
        switch (std::min<int64_t>(task_tiles, tiles - t * task_tiles)) {
          case 1: run_rows<Out, 1>(a, n); break;
          case 2: run_rows<Out, 2>(a, n); break;
          default: run_rows<Out, kTiles>(a, n); break;
        }
      }
    });
  };
  dispatch(x.scalar_type(), name, run);
  return y;
}

}  // namespace

at::Tensor vnni_int8_linear(at::Tensor x, at::Tensor packed, at::Tensor scale,
                               c10::optional<at::Tensor> bias,
                               c10::optional<at::Tensor> out) {
  return run_linear("vnni_int8_linear", x, packed, scale, bias, false, false, out);
}

at::Tensor vnni_pack_gated(at::Tensor w) {
  TORCH_CHECK(w.dim() == 2 && w.scalar_type() == at::kChar, "vnni_pack_gated: w must be int8 [2I, K]");
  TORCH_CHECK(w.size(1) % kBlock == 0, "vnni_pack_gated: needs K % 64 == 0, got ", w.size(1));
  TORCH_CHECK(w.min().item<int8_t>() > -128, "vnni_pack_gated: weights must lie in [-127, 127]");
  return pack_gated_tile_tasks((w.to(at::kShort) + 128).to(at::kByte), 4);
}

at::Tensor vnni_int8_gated_linear(at::Tensor x, at::Tensor packed, at::Tensor scale,
                                     c10::optional<at::Tensor> bias, bool silu_mul,
                                     c10::optional<at::Tensor> out) {
  return run_linear("vnni_int8_gated_linear", x, packed, scale, bias, true, silu_mul, out);
}

#else  // no AVX512-VNNI: Int8Linear keeps int8_linear

bool vnni_int8_linear_available() { return false; }

at::Tensor vnni_pack_weight(at::Tensor) {
  TORCH_CHECK(false, "vnni_pack_weight: built without AVX512-VNNI");
}

at::Tensor vnni_int8_linear(at::Tensor, at::Tensor, at::Tensor,
                               c10::optional<at::Tensor>, c10::optional<at::Tensor>) {
  TORCH_CHECK(false, "vnni_int8_linear: built without AVX512-VNNI");
}

at::Tensor vnni_pack_gated(at::Tensor) {
  TORCH_CHECK(false, "vnni_pack_gated: built without AVX512-VNNI");
}

at::Tensor vnni_int8_gated_linear(at::Tensor, at::Tensor, at::Tensor,
                                     c10::optional<at::Tensor>, bool,
                                     c10::optional<at::Tensor>) {
  TORCH_CHECK(false, "vnni_int8_gated_linear: built without AVX512-VNNI");
}

#endif

}  // namespace roseinfer
