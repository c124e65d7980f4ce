// Shared helpers for the CPU kernels: dtype dispatch, fp32 widening of fp32/bf16/fp16 storage and e^x,
// 16 lanes at a time with AVX-512 where the compiler targets it, scalar otherwise; and `VecF`,
// the widest fp32 vector the build targets (AVX-512 or AVX2), for kernels written once over it.
#pragma once

#include "aten.h"

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace roseinfer {

// Calls f(T{}) for the storage type T of dtype t: fp32, bf16 or fp16.
template <typename F>
void dispatch(at::ScalarType t, const char* name, const F& f) {
  switch (t) {
    case at::kFloat: f(float{}); break;
    case at::kBFloat16: f(c10::BFloat16{}); break;
    case at::kHalf: f(c10::Half{}); break;
    default: TORCH_CHECK(false, name, ": unsupported dtype ", t);
  }
}

// Tells the compiler that `cond` holds. A product loop that might run zero times makes GCC 12
// keep its accumulators' zeros in a stack copy, stored and loaded again before the loop; told
// that the loop runs, it starts them in registers. That matters where the loop is short, as in
// the prefill kernel's products over 32 pairs of dims (BENCHMARKS.md, session 32).
inline void assume(bool cond) {
  if (!cond) __builtin_unreachable();
}

inline float to_float(float x) { return x; }
inline float to_float(c10::BFloat16 x) { return static_cast<float>(x); }
inline float to_float(c10::Half x) { return static_cast<float>(x); }
inline float to_float(int8_t x) { return static_cast<float>(x); }

// 2^f on [-0.5, 0.5]: its degree-6 Taylor coefficients, highest power first (exp16, exp8).
constexpr float kExp2Poly[7] = {1.5403530393381606e-4f, 1.3333558146428443e-3f,
                                9.6181291076284772e-3f, 5.5504108664821580e-2f,
                                2.4022650695910071e-1f, 6.9314718055994531e-1f, 1.0f};

#if defined(__AVX512F__)
inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
inline __m512 load16(const c10::BFloat16* p) {
  // bf16 -> fp32 is a 16-bit shift of the bits.
  __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(raw), 16));
}
inline __m512 load16(const c10::Half* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

inline void store16(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
inline void store16(c10::BFloat16* p, __m512 v) {
  // Round to nearest even, as c10::BFloat16's conversion does (NaN kept quiet).
  __m512i bits = _mm512_castps_si512(v);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
  __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  rounded = _mm512_mask_mov_epi32(rounded, nan, _mm512_set1_epi32(0x7fc00000));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16)));
}
inline void store16(c10::Half* p, __m512 v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                      _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// v rounded to T's precision and widened back: what storing to T then loading gives.
template <typename T>
inline __m512 round16(__m512 v);
template <>
inline __m512 round16<float>(__m512 v) { return v; }
template <>
inline __m512 round16<c10::BFloat16>(__m512 v) {
  // store16's rounding, kept in the register: the upper 16 bits of the rounded pattern.
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  rounded = _mm512_mask_mov_epi32(rounded, nan, _mm512_set1_epi32(0x7fc00000));
  return _mm512_castsi512_ps(_mm512_and_si512(rounded, _mm512_set1_epi32(int(0xffff0000u))));
}
template <>
inline __m512 round16<c10::Half>(__m512 v) {
  return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// e^x as 2^n * 2^f, 2^f by its degree-6 Taylor polynomial on [-0.5, 0.5] (relative error
// < 2e-7); x is clamped to [-87, 88], where e^x stays a normal fp32 number.
inline __m512 exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
  const __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f));
  const __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(t, n);
  __m512 p = _mm512_set1_ps(kExp2Poly[0]);
  for (int i = 1; i < 7; ++i) p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2Poly[i]));
  return _mm512_scalef_ps(p, n);
}

// A 16 x 16 block of 32-bit elements transposed in registers: r[i] holds row i before, column i
// after (unpacks of 32 and 64 bits within 128-bit lanes, then shuffles of the lanes).
inline void transpose16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 8; ++i) {  // per 128-bit lane: rows 2i, 2i + 1 interleaved
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {  // r[4i + j], lane L: rows 4i..4i + 3 of column 4L + j
    r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int j = 0; j < 4; ++j) {  // column 4L + j: lane L of r[j], r[4 + j], r[8 + j], r[12 + j]
    const __m512i x = _mm512_shuffle_i32x4(r[j], r[4 + j], 0x44);
    const __m512i y = _mm512_shuffle_i32x4(r[j], r[4 + j], 0xee);
    const __m512i x2 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0x44);
    const __m512i y2 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0xee);
    t[j] = _mm512_shuffle_i32x4(x, x2, 0x88);
    t[4 + j] = _mm512_shuffle_i32x4(x, x2, 0xdd);
    t[8 + j] = _mm512_shuffle_i32x4(y, y2, 0x88);
    t[12 + j] = _mm512_shuffle_i32x4(y, y2, 0xdd);
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}

// SiLU(gate) * up in 16 lanes, gate and up already rounded to T: T(silu(gate)) * up, which
// store16 rounds to T once more, as transformers' bf16 MLP rounds (`silu_and_mul` and the gated
// linears' epilogue both compute it here, so both round alike).
template <typename T>
inline __m512 silu_mul16(__m512 gate, __m512 up) {
  const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), gate));
  return _mm512_mul_ps(round16<T>(_mm512_div_ps(gate, _mm512_add_ps(_mm512_set1_ps(1.f), e))), up);
}
#elif defined(__AVX2__) && defined(__FMA__)
// exp16's e^x in 8 lanes; 2^n is built from its exponent bits (n in [-126, 127] after the clamp).
inline __m256 exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
  const __m256 t = _mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f));
  const __m256 n = _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 f = _mm256_sub_ps(t, n);
  __m256 p = _mm256_set1_ps(kExp2Poly[0]);
  for (int i = 1; i < 7; ++i) p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2Poly[i]));
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}
#endif

#if defined(__AVX512F__) || defined(__AVX2__)
// Asks for the cache line at p, into L2. An asm statement, not _mm_prefetch: GCC 12 deletes a
// loop whose body is nothing but __builtin_prefetch when its trip count is not a constant (the
// decode attention's block prefetch compiled to nothing until session 21; BENCHMARKS.md).
inline void prefetch_l2(const void* p) {
  asm volatile("prefetcht1 %0" : : "m"(*static_cast<const char*>(p)));
}

// The same into L1.
inline void prefetch_l1(const void* p) {
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
}

// Asks for the line at p as one read once (prefetchnta): for weights a call streams once, which
// into L2 pushed the step's code, activations and K/V out of it at every layer. On Zen 5 a one-row step's
// serial gaps between its loops took 214 -> 141 us and its threads' waits 209 -> 90 us
// (BENCHMARKS.md, session 44). Only where `prefetch_once_pays()`.
inline void prefetch_once(const void* p) {
  asm volatile("prefetchnta %0" : : "m"(*static_cast<const char*>(p)));
}
#endif

// A choice the kernels make by the CPU's maker, once per process: `by_maker`, unless $`env` is
// `yes` (true) or `no` (false), for A/B runs (`build.py` refuses other values at import).
inline bool maker_choice(const char* env, const char* yes, const char* no, bool by_maker) {
  const char* choice = std::getenv(env);
  if (choice != nullptr && std::strcmp(choice, yes) == 0) return true;
  if (choice != nullptr && std::strcmp(choice, no) == 0) return false;
  return by_maker;
}

inline bool cpu_is_amd() {
#if defined(__x86_64__) || defined(_M_X64)
  return __builtin_cpu_is("amd") != 0;
#else
  return false;
#endif
}

// Whether the linears ask for weights they read once with `prefetch_once` (else `prefetch_l2`):
// on AMD CPUs, not on Intel's. On an Intel Xeon (family 6 model 207, no AMX) prefetchnta's lines
// skip L2 and do not stay in L3, which there can hold much of the weights: with prefetcht1 the
// one-row linears took 0.76-0.88x the unpacked kernels' time instead of 1.48-2.09x, one stream
// 1.04-1.17x the weight-read floor instead of 1.46-2.27x (BENCHMARKS.md, session 61).
// $ROSEINFER_PREFETCH_ONCE=nta or l2 overrides it.
inline bool prefetch_once_pays() {
  static const bool pays = maker_choice("ROSEINFER_PREFETCH_ONCE", "nta", "l2", cpu_is_amd());
  return pays;
}

// Whether bf16 linears take their products by fp32 FMAs on widened weights rather than by
// vdpbf16ps (`dpbf16_linear`): on Intel's CPUs, where vdpbf16ps runs one per two cycles (85
// GFLOP/s a core against 175 for fp32 FMAs on a Xeon of family 6 model 207), not on AMD's (Zen 4:
// 235 against 116). $ROSEINFER_BF16_PAIRS=dpbf16 or fma overrides it.
inline bool bf16_pairs_by_fma() {
  static const bool fma = maker_choice("ROSEINFER_BF16_PAIRS", "fma", "dpbf16", !cpu_is_amd());
  return fma;
}

#if defined(__AVX512VNNI__)
// acc += the sums of 4 products of u8's unsigned and s8's signed bytes (vpdpbusd), acc updated in
// its register. An asm statement, not _mm512_dpbusd_epi32: in a loop carrying a dozen such sums
// GCC 12 copied each sum to another register and back at every step (two vmovdqa per
// vpdpbusd), and Zen 5, which runs two vpdpbusd a cycle, then spent its dispatch on the copies:
// vnni_int8_linear at 32 rows ran at 63 % of the peak, 82 % without them (BENCHMARKS.md,
// session 38). The same instruction on the same operands: the same sums.
inline void dpbusd_into(__m512i& acc, __m512i u8, __m512i s8) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u8), "v"(s8));
}
#endif

// The widest fp32 vector, kVecLanes floats, where ROSEINFER_VECF is defined (the build targets
// AVX-512, or AVX2 with FMA and F16C; elsewhere callers keep a scalar loop). vec_load widens
// fp32, bf16, fp16 or int8 storage to fp32.
#if defined(__AVX512F__)
#define ROSEINFER_VECF 1
using VecF = __m512;
constexpr int kVecLanes = 16;
constexpr int kVecRegisters = 32;
inline VecF vec_zero() { return _mm512_setzero_ps(); }
inline VecF vec_fmadd(VecF a, VecF b, VecF c) { return _mm512_fmadd_ps(a, b, c); }
inline VecF vec_add(VecF a, VecF b) { return _mm512_add_ps(a, b); }
inline float vec_sum(VecF v) { return _mm512_reduce_add_ps(v); }
template <typename T>
inline VecF vec_load(const T* p) { return load16(p); }
inline VecF vec_load(const int8_t* p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define ROSEINFER_VECF 1
using VecF = __m256;
constexpr int kVecLanes = 8;
constexpr int kVecRegisters = 16;
inline VecF vec_zero() { return _mm256_setzero_ps(); }
inline VecF vec_fmadd(VecF a, VecF b, VecF c) { return _mm256_fmadd_ps(a, b, c); }
inline VecF vec_add(VecF a, VecF b) { return _mm256_add_ps(a, b); }
inline float vec_sum(VecF v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
inline VecF vec_load(const float* p) { return _mm256_loadu_ps(p); }
inline VecF vec_load(const c10::BFloat16* p) {
  // bf16 -> fp32 is a 16-bit shift of the bits.
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16));
}
inline VecF vec_load(const c10::Half* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline VecF vec_load(const int8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
// round16 and store16 in 8 lanes: v rounded to T's precision (nearest even, NaN kept quiet, as
// c10's conversions) and widened back; v stored as T.
template <typename T>
inline __m256 round8(__m256 v);
template <>
inline __m256 round8<float>(__m256 v) { return v; }
template <>
inline __m256 round8<c10::BFloat16>(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256 rounded =
      _mm256_castsi256_ps(_mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))));
  const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  const __m256 kept = _mm256_blendv_ps(rounded, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)), nan);
  return _mm256_and_ps(kept, _mm256_castsi256_ps(_mm256_set1_epi32(int(0xffff0000u))));
}
template <>
inline __m256 round8<c10::Half>(__m256 v) {
  return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
inline void store8(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
inline void store8(c10::BFloat16* p, __m256 v) {
  // round8's upper halves, packed: values in [0, 0xffff] pass packus unchanged.
  const __m256i hi = _mm256_srli_epi32(_mm256_castps_si256(round8<c10::BFloat16>(v)), 16);
  const __m128i packed =
      _mm_packus_epi32(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), packed);
}
inline void store8(c10::Half* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#else
constexpr int kVecLanes = 0;
constexpr int kVecRegisters = 0;
#endif

// x[0..n) ~ scale * q: scale = max|x| / 127, q = x / scale rounded to nearest even and clamped
// to [-127, 127] (0 where scale is 0; scale NaN and q 0 where x holds a NaN), exactly as
// `roseinfer.layers.kv_cache.quantize_rows` computes it. For int8 cache rows and the blocks of
// activations `vnni_int8_linear` multiplies. Returns the sum of the q written (exact in fp32:
// |sum| <= 127 n), from the registers: reading `out` back just after its narrower stores waits
// for them to reach the cache (BENCHMARKS.md, session 37).
template <typename T>
inline float quantize_row(const T* x, int64_t n, int8_t* out, float* scale) {
  float amax = 0.f;
  bool nan = false;
  int64_t d = 0;
#if defined(__AVX512F__)
  __m512 amaxv = _mm512_setzero_ps();
  __mmask16 nanv = 0;
  for (; d + 16 <= n; d += 16) {
    const __m512 v = load16(x + d);
    amaxv = _mm512_max_ps(amaxv, _mm512_abs_ps(v));  // drops NaNs: counted apart
    nanv |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  }
  amax = _mm512_reduce_max_ps(amaxv);
  nan = nanv != 0;
#elif defined(ROSEINFER_VECF)  // AVX2: the same in 8 lanes
  __m256 amaxv = _mm256_setzero_ps(), nanv = _mm256_setzero_ps();
  const __m256 sign = _mm256_set1_ps(-0.f);
  for (; d + 8 <= n; d += 8) {
    const __m256 v = vec_load(x + d);
    amaxv = _mm256_max_ps(_mm256_andnot_ps(sign, v), amaxv);  // a NaN in v gives amaxv back
    nanv = _mm256_or_ps(nanv, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, amaxv);
  for (float lane : lanes) amax = std::max(amax, lane);
  nan = _mm256_movemask_ps(nanv) != 0;
#endif
  for (; d < n; ++d) {
    const float v = to_float(x[d]);
    nan = nan || std::isnan(v);
    amax = std::max(amax, std::abs(v));
  }
  const float s = nan ? std::numeric_limits<float>::quiet_NaN() : amax / 127.f;
  *scale = s;
  d = 0;
  float sum = 0.f;
#if defined(__AVX512F__)
  const __m512 sv = _mm512_set1_ps(s), lo = _mm512_set1_ps(-127.f), hi = _mm512_set1_ps(127.f);
  __m512 sums = _mm512_setzero_ps();
  for (; s > 0.f && d + 16 <= n; d += 16) {
    __m512 r = _mm512_roundscale_ps(_mm512_div_ps(load16(x + d), sv),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm512_min_ps(_mm512_max_ps(r, lo), hi);
    sums = _mm512_add_ps(sums, r);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + d),
                     _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(r)));
  }
  sum = _mm512_reduce_add_ps(sums);
#elif defined(ROSEINFER_VECF)
  const __m256 sv = _mm256_set1_ps(s), lo = _mm256_set1_ps(-127.f), hi = _mm256_set1_ps(127.f);
  __m256 sums = _mm256_setzero_ps();
  for (; s > 0.f && d + 8 <= n; d += 8) {
    __m256 r = _mm256_round_ps(_mm256_div_ps(vec_load(x + d), sv),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
    sums = _mm256_add_ps(sums, r);
    const __m256i q = _mm256_cvtps_epi32(r);
    const __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + d), _mm_packs_epi16(q16, q16));
  }
  alignas(32) float lanes_sum[8];
  _mm256_store_ps(lanes_sum, sums);
  for (float lane : lanes_sum) sum += lane;
#endif
  for (; d < n; ++d) {
    out[d] = s > 0.f ? static_cast<int8_t>(
                           std::clamp(std::nearbyint(to_float(x[d]) / s), -127.f, 127.f))
                     : int8_t(0);
    sum += static_cast<float>(out[d]);
  }
  return sum;
}

}  // namespace roseinfer
