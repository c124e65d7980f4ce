// Linear layers for small batches, streaming the weights once: y = (x @ w.T) [* scale] + bias
// with weights [N, K] either int8 (one scale per output channel) or in x's own dtype, fp32
// accumulation. A decode step at small batch is bound by reading the weights: this streams them
// with software prefetch, a few weight rows at a time, and applies each loaded tile to up to
// eight rows of x at a time (four with AVX2's 16 registers).
#include <ATen/Parallel.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "lane_rows.h"
#include "ops.h"
#include "parallel.h"
#include "vec.h"

namespace roseinfer {
namespace {

inline float weight_to_float(int8_t w) { return static_cast<float>(w); }
template <typename W>
inline float weight_to_float(W w) { return to_float(w); }

// dst[0..n) = src[0..n) in fp32: x's rows (bf16, fp16) and weight rows (also int8).
template <typename S>
inline void widen(const S* src, int64_t n, float* dst) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, vec_load(src + i));
#elif defined(ROSEINFER_VECF)
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, vec_load(src + i));
#endif
  for (; i < n; ++i) dst[i] = weight_to_float(src[i]);
}

// Rows of x per pass over a tile of weights: M rows times R weight rows of accumulators must
// stay in registers (32 with AVX-512, 16 with AVX2).
constexpr int kRowsPerPass = kVecRegisters == 32 ? 8 : 4;

// Rows of x up to which AVX2 takes dot_row in a pass of gemv: a whole pass (4 rows) with fp32,
// bf16 and fp16 weights; with int8 only 1-2, as at 3-16 rows dot_tile measured level or faster.
// Passes of 8 through dot_row lost with bf16 weights in the engine (BENCHMARKS.md, session 22).
template <typename W>
constexpr int kDotRows = std::is_same_v<W, int8_t> ? 2 : 4;

#if defined(ROSEINFER_VECF)
// Dot products of R weight rows with M rows of x (fp32, K a multiple of kVecLanes): out[m][r].
template <typename W, int M, int R>
inline void dot_tile(const float* xf, int64_t K, const W* w, float out[M][R]) {
  constexpr int64_t kLine = 64 / sizeof(W);  // weights per cache line
  VecF acc[M][R];
  for (int m = 0; m < M; ++m)
    for (int r = 0; r < R; ++r) acc[m][r] = vec_zero();
  // The rows 2 tiles ahead: the hardware prefetchers stop at each 4 KB page.
  const W* ahead = w + 2 * R * K;
  for (int64_t k = 0; k < K; k += kVecLanes) {
    if (k % kLine == 0)
      for (int r = 0; r < R; ++r) _mm_prefetch(reinterpret_cast<const char*>(ahead + r * K + k), _MM_HINT_T0);
    VecF wv[R];
    for (int r = 0; r < R; ++r) wv[r] = vec_load(w + r * K + k);
    for (int m = 0; m < M; ++m) {
      const VecF xv = vec_load(xf + m * K + k);
      for (int r = 0; r < R; ++r) acc[m][r] = vec_fmadd(xv, wv[r], acc[m][r]);
    }
  }
  for (int m = 0; m < M; ++m)
    for (int r = 0; r < R; ++r) out[m][r] = vec_sum(acc[m][r]);
}

// One weight row's dot products with M rows of x (fp32, K a multiple of kVecLanes): out[m].
// 8 / M accumulators per row of x over consecutive vectors, so a task's weight rows are read as
// one sequential stream: dot_tile's R rows are R streams at once, which a Zen 3 host read at
// 11–20 GB/s against 26–28 for this form (BENCHMARKS.md, session 12). The stream is prefetched
// 2 KB ahead into L1 for 1-3 rows of x, and 8 KB ahead into L2 for 4, where each line takes
// longer to multiply (session 22: 21-24 % faster there than 2 KB into L1).
template <typename W, int M>
inline void dot_row(const float* xf, int64_t K, const W* w, float out[M]) {
  constexpr int kAcc = 8 / M;  // 8 FMA chains: two pipes of 4-cycle FMAs
  constexpr int64_t kStep = kAcc * kVecLanes;  // weights per iteration
  constexpr int64_t kLine = 64 / sizeof(W);
  constexpr int64_t kAhead = (M >= 4 ? 8192 : 2048) / sizeof(W);
  VecF acc[M][kAcc];
  for (int m = 0; m < M; ++m)
    for (int a = 0; a < kAcc; ++a) acc[m][a] = vec_zero();
  int64_t k = 0;
  for (; k + kStep <= K; k += kStep) {
    for (int64_t p = k; p < k + kStep; p += kVecLanes)
      if (p % kLine == 0) {
        if constexpr (M >= 4)
          prefetch_l2(w + p + kAhead);
        else
          _mm_prefetch(reinterpret_cast<const char*>(w + p + kAhead), _MM_HINT_T0);
      }
    for (int a = 0; a < kAcc; ++a) {
      const VecF wv = vec_load(w + k + a * kVecLanes);
      for (int m = 0; m < M; ++m)
        acc[m][a] = vec_fmadd(vec_load(xf + m * K + k + a * kVecLanes), wv, acc[m][a]);
    }
  }
  for (; k < K; k += kVecLanes) {
    const VecF wv = vec_load(w + k);
    for (int m = 0; m < M; ++m) acc[m][0] = vec_fmadd(vec_load(xf + m * K + k), wv, acc[m][0]);
  }
  for (int m = 0; m < M; ++m) {
    VecF sum = acc[m][0];
    for (int a = 1; a < kAcc; ++a) sum = vec_add(sum, acc[m][a]);
    out[m] = vec_sum(sum);
  }
}
#endif

template <typename W>
inline float dot1(const float* xf, int64_t K, const W* w) {
  float acc = 0.f;
  for (int64_t k = 0; k < K; ++k) acc += xf[k] * weight_to_float(w[k]);
  return acc;
}

// As F.linear (fp32 accumulation, one rounding) where `scale` is null; else as
// aten._weight_int8pack_mm then a bias add: the scaled product rounded, then the sum.
template <typename T>
inline T finish_output(float acc, const T* scale, const T* bias, int64_t c) {
  if (scale == nullptr) return static_cast<T>(bias == nullptr ? acc : acc + to_float(bias[c]));
  const T prod = static_cast<T>(acc * to_float(scale[c]));
  return bias == nullptr ? prod : static_cast<T>(to_float(prod) + to_float(bias[c]));
}

// Rows m0..m0+M of y for output channels [n, n_end). `scale` is null for unquantised weights.
template <typename T, typename W, int M>
void gemv_rows(const float* xf, const W* w, int64_t N, int64_t K, const T* scale,
               const T* bias, T* y, int64_t m0, int64_t n, int64_t n_end) {
  auto finish = [&](int m, int64_t c, float acc) {
    y[(m0 + m) * N + c] = finish_output(acc, scale, bias, c);
  };
#if defined(ROSEINFER_VECF)
  // With AVX2, up to kDotRows<W> rows of x: dot_row.
  if (kVecRegisters == 16 && M <= kDotRows<W> && K % kVecLanes == 0) {
    float out[M];
    for (; n < n_end; ++n) {
      dot_row<W, M>(xf + m0 * K, K, w + n * K, out);
      for (int m = 0; m < M; ++m) finish(m, n, out[m]);
    }
    return;  // every channel done: dot_row has no tail
  }
  if (K % kVecLanes == 0) {
    constexpr int R = M <= kRowsPerPass / 2 ? 4 : 2;
    float out[M][R];
    for (; n + R <= n_end; n += R) {
      dot_tile<W, M, R>(xf + m0 * K, K, w + n * K, out);
      for (int m = 0; m < M; ++m)
        for (int r = 0; r < R; ++r) finish(m, n + r, out[m][r]);
    }
  }
#endif
  for (; n < n_end; ++n)
    for (int m = 0; m < M; ++m) finish(m, n, dot1(xf + (m0 + m) * K, K, w + n * K));
}

#if defined(ROSEINFER_VECF) && !defined(__AVX512F__)
// With AVX2, for the rows of x where lane_rows_pay<W>: x's rows along the lanes (lane_rows.h),
// transposed once per call, against kChannels weight rows at a time, each weight element
// broadcast from its row: no horizontal sums, no weight transposition, each weight row read
// once per kDepth inputs for all rows of x, where gemv reads it once per pass of rows.
// bf16, fp16 and int8 weight rows are widened to fp32 once per task, into a buffer that stays
// in L1/L2 for all of the task's passes (at 8 rows of x that costs as much as the FMAs).
constexpr int64_t kChannels = 12;  // a task's weight rows: two blocks of 6 or one of 12
constexpr int64_t kDepth = 256;  // inputs per pass: a pass's slice of xt stays in L2

// Rows of x for which lane_rows_linear beats gemv over SmolLM2's linears (`kernel_ab.py
// linears`, BENCHMARKS.md sessions 17, 20 and 22). Its 2 x 6 tile takes row vectors in pairs
// and an odd last one goes through the slower 1 x 12 tile, so for fp32 and bf16 (fp16 taken as
// alike) it pays from 13 rows where the vectors pair up (13-16, 25-32, 41-48), and at any count
// from 49 rows (fp32) or 33 (bf16, whose gemv widens the weights again at each pass of rows).
// int8, whose gemv reads a quarter of fp32's bytes, from 64.
template <typename W>
constexpr bool lane_rows_pay(int64_t M) {
  if constexpr (std::is_same_v<W, int8_t>) return M >= 64;
  const bool paired = (M + lanes::kLanes - 1) / lanes::kLanes % 2 == 0;
  if constexpr (std::is_same_v<W, float>) return M > 48 || (M > 12 && paired);
  return M > 32 || (M > 12 && paired);
}

// Asks for a run of bytes a slice at a time, into L2: the next task's weight rows, between this
// task's tile passes. All at once, the prefetches fill the miss queues and the FMAs wait behind
// them (BENCHMARKS.md, session 20).
class Prefetcher {
 public:
  Prefetcher(const void* begin, int64_t bytes, int64_t slices)
      : at_(static_cast<const char*>(begin)),
        end_(at_ + bytes),
        step_((bytes + slices - 1) / slices) {}
  void next() {
    const char* stop = std::min(end_, at_ + step_);
    for (; at_ < stop; at_ += 64) prefetch_l2(at_);
  }

 private:
  const char* at_;
  const char* end_;
  int64_t step_;
};

// xt[k][m] = x[m][k] for x [M, K] into xt [K][MP] (MP >= M): 8 x 8 blocks through registers
// where both dims allow, a scalar loop for the rest.
inline void transpose_rows(const float* x, int64_t M, int64_t K, float* xt, int64_t MP) {
  int64_t m0 = 0;
  for (; m0 + 8 <= M; m0 += 8) {
    int64_t k0 = 0;
    for (; k0 + 8 <= K; k0 += 8) {
      __m256 r[8], t[8];
      for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(x + (m0 + i) * K + k0);
      for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
      }
      for (int i = 0; i < 8; i += 4)
        for (int h = 0; h < 2; ++h) {
          r[i + h] = _mm256_shuffle_ps(t[i + h], t[i + h + 2], _MM_SHUFFLE(1, 0, 1, 0));
          r[i + h + 2] = _mm256_shuffle_ps(t[i + h], t[i + h + 2], _MM_SHUFFLE(3, 2, 3, 2));
        }
      // r[0..3]: columns k0 + {0, 2, 1, 3} in the low halves, + 4.. in the high halves (rows
      // m0..m0+3); r[4..7] the same for rows m0 + 4..
      static constexpr int kCol[4] = {0, 2, 1, 3};
      for (int c = 0; c < 4; ++c) {
        _mm256_storeu_ps(xt + (k0 + kCol[c]) * MP + m0,
                         _mm256_permute2f128_ps(r[c], r[c + 4], 0x20));
        _mm256_storeu_ps(xt + (k0 + kCol[c] + 4) * MP + m0,
                         _mm256_permute2f128_ps(r[c], r[c + 4], 0x31));
      }
    }
    for (; k0 < K; ++k0)
      for (int64_t m = m0; m < m0 + 8; ++m) xt[k0 * MP + m] = x[m * K + k0];
  }
  for (int64_t m = m0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) xt[k * MP + m] = x[m * K + k];
}

// `scale` is null for unquantised weights.
template <typename T, typename W>
void lane_rows_linear(const float* xf, int64_t M, const W* w, int64_t N, int64_t K,
                      const T* scale, const T* bias, T* y) {
  using lanes::kLanes;
  constexpr bool kWiden = !std::is_same_v<W, float>;
  const int64_t MP = (M + kLanes - 1) / kLanes * kLanes;
  // Buffers kept from call to call (a fresh one of this size costs page faults each time); the
  // workers see this thread's through the pointers, not their own thread_local copies.
  thread_local std::vector<float> xt_buffer, zero_buffer;
  xt_buffer.resize(K * MP);
  float* xt = xt_buffer.data();  // [K][MP], the padding rows zero
  transpose_rows(xf, M, K, xt, MP);
  for (int64_t k = 0; k < K; ++k) std::fill(xt + k * MP + M, xt + (k + 1) * MP, 0.f);
  zero_buffer.assign(K, 0.f);
  const float* zero = zero_buffer.data();  // the weight rows past N
  const int64_t groups = (N + kChannels - 1) / kChannels;
  // block_products calls per task: kChannels / 6 per pair of row vectors and one for an odd
  // last vector, in each of the ceil(K / kDepth) passes.
  const int64_t passes =
      (K + kDepth - 1) / kDepth * (MP / (2 * kLanes) * (kChannels / 6) + MP / kLanes % 2);
  parallel_for(0, groups, 1, [&](int64_t g0, int64_t g1) {
    thread_local std::vector<float> out, wide;
    out.resize(kChannels * MP);  // [kChannels][MP]
    if (kWiden) wide.resize(kChannels * K);  // [kChannels][K]: the task's rows in fp32
    const float* row[kChannels];
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t n = g * kChannels, count = std::min(kChannels, N - n);
      // The next task's weight rows on their way from memory while this one multiplies.
      const int64_t next_rows = g + 1 < g1 ? std::min(kChannels, N - n - kChannels) : 0;
      Prefetcher ahead(next_rows > 0 ? w + (n + kChannels) * K : w,
                       next_rows * K * int64_t(sizeof(W)), passes);
      for (int64_t j = 0; j < kChannels; ++j) {
        if (j >= count) {
          row[j] = zero;
        } else if constexpr (kWiden) {
          widen(w + (n + j) * K, K, wide.data() + j * K);
          row[j] = wide.data() + j * K;
        } else {
          row[j] = w + (n + j) * K;
        }
      }
      // Each block of 6 weight rows stays in L1 over every pair of row vectors; an odd last
      // vector of rows takes all 12 weight rows at once.
      for (int64_t d0 = 0; d0 < K; d0 += kDepth) {
        const int64_t d1 = std::min(K, d0 + kDepth);
        int64_t c = 0;
        for (int64_t j = 0; j < kChannels; j += 6)
          for (c = 0; c + 2 * kLanes <= MP; c += 2 * kLanes) {
            ahead.next();
            lanes::block_products<2, 6>(xt, MP, row + j, out.data() + j * MP, d0, d1, c,
                                        d0 > 0);
          }
        if (c < MP) {
          ahead.next();
          lanes::block_products<1, 12>(xt, MP, row, out.data(), d0, d1, c, d0 > 0);
        }
      }
      for (int64_t m = 0; m < M; ++m)
        for (int64_t j = 0; j < count; ++j)
          y[m * N + n + j] = finish_output<T>(out[j * MP + m], scale, bias, n + j);
    }
  });
}
#endif

template <typename T, typename W>
void gemv(const float* xf, int64_t M, const W* w, int64_t N, int64_t K, const T* scale,
          const T* bias, T* y) {
#if defined(ROSEINFER_VECF) && !defined(__AVX512F__)
  if (lane_rows_pay<W>(M) && K > 0) return lane_rows_linear(xf, M, w, N, K, scale, bias, y);
#endif
  // Tasks of 32 output channels (an even split over the threads even for N = 576); within one,
  // every kRowsPerPass rows of x reuse its weights from L1/L2.
  constexpr int64_t kTask = 32;
  parallel_for(0, (N + kTask - 1) / kTask, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t n = c * kTask, n_end = std::min(N, n + kTask);
      for (int64_t m0 = 0; m0 < M; m0 += kRowsPerPass) {
        switch (std::min<int64_t>(kRowsPerPass, M - m0)) {
          case 1: gemv_rows<T, W, 1>(xf, w, N, K, scale, bias, y, m0, n, n_end); break;
          case 2: gemv_rows<T, W, 2>(xf, w, N, K, scale, bias, y, m0, n, n_end); break;
          case 3: gemv_rows<T, W, 3>(xf, w, N, K, scale, bias, y, m0, n, n_end); break;
          case 4: gemv_rows<T, W, 4>(xf, w, N, K, scale, bias, y, m0, n, n_end); break;
          case 5: gemv_rows<T, W, 5>(xf, w, N, K, scale, bias, y, m0, n, n_end); break;
          case 6: gemv_rows<T, W, 6>(xf, w, N, K, scale, bias, y, m0, n, n_end); break;
          case 7: gemv_rows<T, W, 7>(xf, w, N, K, scale, bias, y, m0, n, n_end); break;
          default: gemv_rows<T, W, 8>(xf, w, N, K, scale, bias, y, m0, n, n_end); break;
        }
      }
    }
  });
}

void check_x_and_bias(const at::Tensor& x, const at::Tensor& weight,
                      const c10::optional<at::Tensor>& bias, const char* name) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), name, ": x must be contiguous [M, K]");
  TORCH_CHECK(weight.dim() == 2 && weight.is_contiguous() && weight.size(1) == x.size(1), name,
              ": weight must be contiguous [N, K]");
  if (bias.has_value())
    TORCH_CHECK(bias->is_contiguous() && bias->numel() == weight.size(0) &&
                    bias->scalar_type() == x.scalar_type(),
                name, ": bias must be [N] in x's dtype");
}

// x [n] in fp32: x itself, or x widened into a buffer kept from call to call (aten's `.to()`
// costs microseconds of dispatch and allocation, paid by each of a decode step's ~120 linears).
inline const float* widened_rows(const float* x, int64_t /*n*/) { return x; }
template <typename T>
const float* widened_rows(const T* x, int64_t n) {
  thread_local std::vector<float> buffer;
  buffer.resize(n);
  widen(x, n, buffer.data());
  return buffer.data();
}

// y = x @ w.T [* scale] + bias through gemv, with int8 weights or weights in x's own dtype.
template <bool kInt8>
at::Tensor run_gemv(const at::Tensor& x, const at::Tensor& weight,
                       const c10::optional<at::Tensor>& scale,
                       const c10::optional<at::Tensor>& bias,
                       const c10::optional<at::Tensor>& out, const char* name) {
  const int64_t M = x.size(0), K = x.size(1), N = weight.size(0);
  auto y = output_tensor(out, {M, N}, x.options(), x, name);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    using W = std::conditional_t<kInt8, int8_t, T>;
    gemv<T, W>(widened_rows(x.data_ptr<T>(), M * K), M, weight.data_ptr<W>(), N, K,
               scale.has_value() ? scale->data_ptr<T>() : nullptr,
               bias.has_value() ? bias->data_ptr<T>() : nullptr, y.data_ptr<T>());
  };
  dispatch(x.scalar_type(), name, run);
  return y;
}

}  // namespace

at::Tensor int8_linear(at::Tensor x, at::Tensor weight, at::Tensor scale,
                          c10::optional<at::Tensor> bias, c10::optional<at::Tensor> out) {
  check_x_and_bias(x, weight, bias, "int8_linear");
  TORCH_CHECK(weight.scalar_type() == at::kChar, "int8_linear: weight must be int8");
  TORCH_CHECK(scale.is_contiguous() && scale.numel() == weight.size(0) &&
                  scale.scalar_type() == x.scalar_type(),
              "int8_linear: scale must be [N] in x's dtype");
  return run_gemv<true>(x, weight, scale, bias, out, "int8_linear");
}

int64_t vector_lanes() { return kVecLanes; }

at::Tensor int8_dequantize(at::Tensor weight, at::Tensor scale) {
  TORCH_CHECK(weight.dim() == 2 && weight.is_contiguous() && weight.scalar_type() == at::kChar,
              "int8_dequantize: weight must be contiguous int8 [N, K]");
  TORCH_CHECK(scale.numel() == weight.size(0), "int8_dequantize: scale must be [N]");
  const int64_t N = weight.size(0), K = weight.size(1);
  auto out = at::empty({N, K}, weight.options().dtype(at::kFloat));
  const auto scale_f = scale.to(at::kFloat).contiguous();
  const int8_t* w = weight.data_ptr<int8_t>();
  const float* s = scale_f.data_ptr<float>();
  float* o = out.data_ptr<float>();
  // aten's int8 * fp32 goes through a type-promoting loop at ~2 ns an element (BENCHMARKS.md,
  // session 13); this one vectorises.
  parallel_for(0, N, 16, [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const float sn = s[n];
#pragma omp simd
      for (int64_t k = 0; k < K; ++k) o[n * K + k] = static_cast<float>(w[n * K + k]) * sn;
    }
  });
  return out;
}

at::Tensor small_batch_linear(at::Tensor x, at::Tensor weight,
                                 c10::optional<at::Tensor> bias,
                                 c10::optional<at::Tensor> out) {
  check_x_and_bias(x, weight, bias, "small_batch_linear");
  TORCH_CHECK(weight.scalar_type() == x.scalar_type(),
              "small_batch_linear: weight must be in x's dtype");
  return run_gemv<false>(x, weight, c10::nullopt, bias, out, "small_batch_linear");
}

}  // namespace roseinfer
