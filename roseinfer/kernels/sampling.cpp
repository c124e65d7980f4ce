// Greedy sampling: the index and value of each row's largest logit; a grammar's token bitmask
// applied to logits in place; the two passes logprobs take over each row (its logsumexp, and how
// many logits exceed the chosen token's: its rank).
//
// Greedy: the index of each row's largest logit, and the logit (which says whether the row was
// finite: the sampler's check needs no gather after it). torch's max over bf16 rows of 49,152
// logits takes 43 µs for one row and 0.67 ms for 32 (a few percent of a decode step); this reads
// each row once with 16-lane compares (8 with AVX2): 5 µs and 73 µs.
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <tuple>
#include <vector>

#include "parallel.h"
#include "vec.h"

namespace roseinfer {
namespace {

// A row's maximum: its first index and its value, or its first NaN's (as torch.max).
struct RowMax {
  int64_t at;
  float value;
};

// The first index of the row's maximum (n > 0), or of its first NaN if it has one (as torch.max).
template <typename T>
RowMax argmax_row(const T* row, int64_t n) {
  int64_t i = 1, best_at = 0;
  float best = to_float(row[0]);
  bool has_nan = std::isnan(best);
#if defined(__AVX512F__)
  if (n >= 16) {
    // Per lane: the largest value seen and where (strictly greater: its first occurrence).
    __m512 mx = load16(row);
    __m512i idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i at = idx;
    __mmask16 nan = _mm512_cmp_ps_mask(mx, mx, _CMP_UNORD_Q);
    for (i = 16; i + 16 <= n; i += 16) {
      idx = _mm512_add_epi32(idx, _mm512_set1_epi32(16));
      const __m512 v = load16(row + i);
      const __mmask16 gt = _mm512_cmp_ps_mask(v, mx, _CMP_GT_OQ);
      nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
      mx = _mm512_mask_mov_ps(mx, gt, v);
      at = _mm512_mask_mov_epi32(at, gt, idx);
    }
    has_nan = nan != 0;
    best = _mm512_reduce_max_ps(mx);
    // The smallest index among the lanes holding the maximum: its first occurrence overall.
    const __mmask16 is_best = _mm512_cmp_ps_mask(mx, _mm512_set1_ps(best), _CMP_EQ_OQ);
    best_at = _mm512_mask_reduce_min_epi32(is_best, at);
  }
#elif defined(ROSEINFER_VECF)  // AVX2: the same in 8 lanes, blends for the masks
  if (n >= 8) {
    __m256 mx = vec_load(row);
    __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i at = idx;
    __m256 nan = _mm256_cmp_ps(mx, mx, _CMP_UNORD_Q);
    for (i = 8; i + 8 <= n; i += 8) {
      idx = _mm256_add_epi32(idx, _mm256_set1_epi32(8));
      const __m256 v = vec_load(row + i);
      const __m256 gt = _mm256_cmp_ps(v, mx, _CMP_GT_OQ);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
      mx = _mm256_blendv_ps(mx, v, gt);
      at = _mm256_castps_si256(
          _mm256_blendv_ps(_mm256_castsi256_ps(at), _mm256_castsi256_ps(idx), gt));
    }
    has_nan = _mm256_movemask_ps(nan) != 0;
    alignas(32) float lane_max[8];
    alignas(32) int32_t lane_at[8];
    _mm256_store_ps(lane_max, mx);
    _mm256_store_si256(reinterpret_cast<__m256i*>(lane_at), at);
    best = lane_max[0];
    best_at = lane_at[0];
    for (int j = 1; j < 8; ++j)  // the smallest index among the lanes holding the maximum
      if (lane_max[j] > best || (lane_max[j] == best && lane_at[j] < best_at)) {
        best = lane_max[j];
        best_at = lane_at[j];
      }
  }
#endif
  for (; i < n; ++i) {
    const float v = to_float(row[i]);
    has_nan |= std::isnan(v);
    if (v > best) {
      best = v;
      best_at = i;
    }
  }
  if (has_nan) {  // rare (a broken model): the first NaN, in order
    for (int64_t j = 0; j < n; ++j)
      if (std::isnan(to_float(row[j]))) return {j, std::numeric_limits<float>::quiet_NaN()};
  }
  return {best_at, best};
}

// log sum_i e^(row[i] - peak) + peak, peak the row's maximum (finite): one pass of 16-lane (8 with
// AVX2) e^x over a row that argmax_row has just brought into L2 (49,152 bf16 logits: 96 KB).
template <typename T>
float logsumexp_row(const T* row, int64_t n, float peak) {
  float sum = 0.0f;
  int64_t i = 0;
#if defined(__AVX512F__)
  const __m512 p = _mm512_set1_ps(peak);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  for (; i + 32 <= n; i += 32) {  // two sums: two e^x chains in flight
    acc0 = _mm512_add_ps(acc0, exp16(_mm512_sub_ps(load16(row + i), p)));
    acc1 = _mm512_add_ps(acc1, exp16(_mm512_sub_ps(load16(row + i + 16), p)));
  }
  sum = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
#elif defined(ROSEINFER_VECF)
  const __m256 p = _mm256_set1_ps(peak);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_add_ps(acc0, exp8(_mm256_sub_ps(vec_load(row + i), p)));
    acc1 = _mm256_add_ps(acc1, exp8(_mm256_sub_ps(vec_load(row + i + 8), p)));
  }
  sum = vec_sum(_mm256_add_ps(acc0, acc1));
#endif
  for (; i < n; ++i) sum += std::exp(to_float(row[i]) - peak);
  return std::log(sum) + peak;
}

// How many of the row's logits are greater than `value` (a NaN is greater than nothing).
template <typename T>
int64_t count_greater_row(const T* row, int64_t n, float value) {
  int64_t count = 0, i = 0;
#if defined(__AVX512F__)
  const __m512 v = _mm512_set1_ps(value);
  for (; i + 16 <= n; i += 16)
    count += __builtin_popcount(_mm512_cmp_ps_mask(load16(row + i), v, _CMP_GT_OQ));
#elif defined(ROSEINFER_VECF)
  const __m256 v = _mm256_set1_ps(value);
  for (; i + 8 <= n; i += 8)
    count += __builtin_popcount(_mm256_movemask_ps(_mm256_cmp_ps(vec_load(row + i), v, _CMP_GT_OQ)));
#endif
  for (; i < n; ++i) count += to_float(row[i]) > value;
  return count;
}

// A candidate (a logit and its token id < 2^32) as one integer ordered as the sampler orders
// them: the larger logit first, equal logits by the lower id. The logit's bits flipped to sort as
// unsigned (-0 read as +0: equal logits), the id's inverted below them. NaN rows never get here.
inline uint64_t candidate_key(float value, int64_t id) {
  value += 0.0f;
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return (static_cast<uint64_t>(bits) << 32) | static_cast<uint32_t>(~static_cast<uint32_t>(id));
}

inline float key_value(uint64_t key) {
  uint32_t bits = static_cast<uint32_t>(key >> 32);
  bits = (bits & 0x80000000u) ? (bits & 0x7FFFFFFFu) : ~bits;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

inline int64_t key_id(uint64_t key) { return ~static_cast<uint32_t>(key); }

// The m likeliest of `keys`' first `len`, moved to its front in no order; returns the m-th's
// logit (what a later logit must beat: an equal one has a higher id).
inline float keep_likeliest(uint64_t* keys, int64_t len, int64_t m) {
  std::nth_element(keys, keys + m - 1, keys + len, std::greater<uint64_t>());
  return key_value(keys[m - 1]);
}

// `keys`' first n largest first, as std::sort with std::greater would order them: a byte at a
// time from the lowest (a stable counting pass each, the bytes every key shares skipped): O(n)
// passes instead of the sort's O(n log n) comparisons, which the 4,096 candidates' tier and the
// whole vocabulary's (a row whose top-p set reached past it) feel (BENCHMARKS.md, session 59).
// `spare`: n keys' room, the caller's (one a thread: a row's 393 KB would be an mmap each).
void sort_keys_descending(uint64_t* keys, int64_t n, std::vector<uint64_t>& spare) {
  uint64_t all = ~uint64_t{0}, any = 0;
  for (int64_t i = 0; i < n; ++i) all &= keys[i], any |= keys[i];
  spare.resize(n);
  uint64_t* from = keys;
  uint64_t* to = spare.data();
  for (int shift = 0; shift < 64; shift += 8) {
    if ((((all ^ any) >> shift) & 0xFF) == 0) continue;  // the same byte in every key
    int64_t start[257] = {};
    for (int64_t i = 0; i < n; ++i) ++start[256 - ((from[i] >> shift) & 0xFF)];  // descending
    for (int d = 1; d < 257; ++d) start[d] += start[d - 1];
    for (int64_t i = 0; i < n; ++i) to[start[255 - ((from[i] >> shift) & 0xFF)]++] = from[i];
    std::swap(from, to);
  }
  if (from != keys) std::copy(from, from + n, keys);
}

// Past this many candidates the byte-wise sort beats std::sort (the tiers' 256 and 1,024 below).
constexpr int64_t kRadixFrom = 2048;
// From this many candidates the draw checks whether they are the whole vocabulary (0..m-1, placed
// by id instead of sorted): only the last tier's are, and the check costs a pass.
constexpr int64_t kPlaceFrom = 2048;

// One pass over a row: each logit above `bar` appended to `keys`, 16 (8) at a time by
// compressing stores (the obvious heap of the m best mispredicts at every insertion: ~3x slower
// on rows the branch predictor has not seen). Whenever `keys` fills up the m best stay and the
// bar rises to the m-th's logit. With `first_m`, the row's first m logits are taken as they are
// and the bar starts at the least of them. Returns how many keys hold candidates, or -1 if the
// row holds a NaN. `keys` holds at least cap + 16.
template <typename T>
int64_t gather_above(const T* row, int64_t n, int64_t m, float bar, bool first_m, uint64_t* keys,
                     int64_t cap) {
  int64_t len = 0, i = 0;
  if (first_m) {
    bar = std::numeric_limits<float>::infinity();
    for (; i < m; ++i) {
      const float v = to_float(row[i]);
      if (std::isnan(v)) return -1;
      keys[len++] = candidate_key(v, i);
      bar = std::min(bar, v);
    }
  }
  auto make_room = [&] {
    if (len > cap - 16) {
      bar = keep_likeliest(keys, len, m);
      len = m;
    }
  };
#if defined(__AVX512F__)
  alignas(64) float vals[16];
  alignas(64) int32_t at[16];
  __mmask16 unordered = 0;
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (; i + 16 <= n; i += 16) {
    const __m512 v = load16(row + i);
    unordered |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    const __mmask16 above = _mm512_cmp_ps_mask(v, _mm512_set1_ps(bar), _CMP_GT_OQ);
    if (above == 0) continue;
    _mm512_mask_compressstoreu_ps(vals, above, v);
    _mm512_mask_compressstoreu_epi32(
        at, above, _mm512_add_epi32(_mm512_set1_epi32(static_cast<int32_t>(i)), lanes));
    const int count = __builtin_popcount(above);
    for (int j = 0; j < count; ++j) keys[len + j] = candidate_key(vals[j], at[j]);
    len += count;
    make_room();
  }
  if (unordered != 0) return -1;
#elif defined(ROSEINFER_VECF)
  int unordered = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = vec_load(row + i);
    unordered |= _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    int above = _mm256_movemask_ps(_mm256_cmp_ps(v, _mm256_set1_ps(bar), _CMP_GT_OQ));
    while (above != 0) {
      const int j = __builtin_ctz(above);
      keys[len++] = candidate_key(to_float(row[i + j]), i + j);
      above &= above - 1;
    }
    make_room();
  }
  if (unordered != 0) return -1;
#endif
  for (; i < n; ++i) {
    const float v = to_float(row[i]);
    if (std::isnan(v)) return -1;
    if (v > bar) keys[len++] = candidate_key(v, i);
    make_room();
  }
  return len;
}

// The row's m likeliest candidates, likeliest first (m <= n). The bar starts where a sample of the
// row puts ~3m logits above it, so that most logits cost one compare and the buffer is sorted
// through once or twice; if fewer than m pass it (a row with many equal logits), the row again
// from its first m logits.
template <typename T>
void top_candidates_row(const T* row, int64_t n, int64_t m, std::vector<uint64_t>& keys,
                        std::vector<uint64_t>& spare, float* values, int64_t* ids) {
  // (no more than the row: a buffer of the row's size was an mmap and its page faults per call)
  const int64_t cap = std::min<int64_t>(std::max<int64_t>(8 * m, m + 16), n + 16);
  keys.resize(cap + 16);
  int64_t len = 0;
  constexpr int64_t kSample = 256;
  const int64_t rank = kSample * 3 * m / n;  // the sample's rank-th largest: ~3m above it
  bool sampled = false;
  if (rank >= 1 && rank < kSample / 2) {
    float sample[kSample];
    const int64_t step = n / kSample;
    bool nan = false;
    for (int64_t j = 0; j < kSample; ++j) {
      sample[j] = to_float(row[j * step]);
      nan |= std::isnan(sample[j]);
    }
    if (!nan) {
      std::nth_element(sample, sample + rank - 1, sample + kSample, std::greater<float>());
      len = gather_above(row, n, m, sample[rank - 1], false, keys.data(), cap);
      sampled = len >= m;
    }
  }
  if (!sampled) len = gather_above(row, n, m, 0.0f, true, keys.data(), cap);
  if (len < 0) {  // rare (a broken model): NaNs first, in order, then the rest by the order
    std::vector<int64_t> order(n);
    for (int64_t j = 0; j < n; ++j) order[j] = j;
    auto likelier = [&](int64_t a, int64_t b) {
      const float va = to_float(row[a]), vb = to_float(row[b]);
      const bool an = std::isnan(va), bn = std::isnan(vb);
      if (an != bn) return an;
      if (!an && va != vb) return va > vb;
      return a < b;
    };
    std::partial_sort(order.begin(), order.begin() + m, order.end(), likelier);
    for (int64_t j = 0; j < m; ++j) {
      values[j] = to_float(row[order[j]]);
      ids[j] = order[j];
    }
    return;
  }
  if (len > m) keep_likeliest(keys.data(), len, m);  // (m = n: every key is kept)
  if (m >= kRadixFrom) {
    sort_keys_descending(keys.data(), m, spare);
  } else {
    std::sort(keys.begin(), keys.begin() + m, std::greater<uint64_t>());
  }
  for (int64_t j = 0; j < m; ++j) {
    ids[j] = key_id(keys[j]);
    values[j] = to_float(row[ids[j]]);  // (the logit itself: a -0 stays -0)
  }
}

void check_rows(const at::Tensor& logits, const char* name) {
  TORCH_CHECK(logits.dim() == 2 && logits.stride(1) == 1 && logits.size(1) > 0, name,
              ": logits must be [B, V] with contiguous rows and V > 0");
}

}  // namespace

at::Tensor logsumexp_rows(at::Tensor logits) {
  check_rows(logits, "logsumexp_rows");
  const int64_t rows = logits.size(0), n = logits.size(1), stride = logits.stride(0);
  auto out = at::empty({rows}, logits.options().dtype(at::kFloat));
  float* op = out.data_ptr<float>();
  dispatch(logits.scalar_type(), "logsumexp_rows", [&](auto tag) {
    using T = decltype(tag);
    const T* lp = logits.data_ptr<T>();
    parallel_for(0, rows, 1, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* row = lp + r * stride;
        const float peak = argmax_row(row, n).value;
        if (std::isfinite(peak)) {
          op[r] = logsumexp_row(row, n, peak);
        } else {  // NaN, or an infinite maximum: e^(x - peak) as torch computes it, in order
          float sum = 0.0f;
          for (int64_t i = 0; i < n; ++i) sum += std::exp(to_float(row[i]) - peak);
          op[r] = std::log(sum) + peak;
        }
      }
    });
  });
  return out;
}

at::Tensor count_greater_rows(at::Tensor logits, at::Tensor values) {
  check_rows(logits, "count_greater_rows");
  TORCH_CHECK(values.dim() == 1 && values.scalar_type() == at::kFloat && values.is_contiguous() &&
                  values.size(0) == logits.size(0),
              "count_greater_rows: values must be contiguous fp32 [B]");
  const int64_t rows = logits.size(0), n = logits.size(1), stride = logits.stride(0);
  auto out = at::empty({rows}, logits.options().dtype(at::kLong));
  int64_t* op = out.data_ptr<int64_t>();
  const float* vp = values.data_ptr<float>();
  dispatch(logits.scalar_type(), "count_greater_rows", [&](auto tag) {
    using T = decltype(tag);
    const T* lp = logits.data_ptr<T>();
    parallel_for(0, rows, 1, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) op[r] = count_greater_row(lp + r * stride, n, vp[r]);
    });
  });
  return out;
}

std::tuple<at::Tensor, at::Tensor> top_candidates_rows(at::Tensor logits, int64_t m) {
  check_rows(logits, "top_candidates_rows");
  const int64_t rows = logits.size(0), n = logits.size(1), stride = logits.stride(0);
  TORCH_CHECK(m > 0 && m <= n, "top_candidates_rows: m must be in [1, V]");
  TORCH_CHECK(n <= std::numeric_limits<int32_t>::max(), "top_candidates_rows: V past int32");
  auto values = at::empty({rows, m}, logits.options().dtype(at::kFloat));
  auto ids = at::empty({rows, m}, logits.options().dtype(at::kLong));
  float* vp = values.data_ptr<float>();
  int64_t* ip = ids.data_ptr<int64_t>();
  dispatch(logits.scalar_type(), "top_candidates_rows", [&](auto tag) {
    using T = decltype(tag);
    const T* lp = logits.data_ptr<T>();
    parallel_for(0, rows, 1, [&](int64_t b, int64_t e) {
      std::vector<uint64_t> keys, spare;
      for (int64_t r = b; r < e; ++r)
        top_candidates_row(lp + r * stride, n, m, keys, spare, vp + r * m, ip + r * m);
    });
  });
  return {values, ids};
}

// The draw among each row's candidates (`layers/draw.py` sample_candidates, value for value): the
// candidates in token order, their running total in double, the first whose total passes u times
// the row's (never past the last with weight). torch's sort of [32, 256] ids alone took 0.25 ms.
at::Tensor sample_candidates_rows(at::Tensor weights, at::Tensor ids, at::Tensor u) {
  TORCH_CHECK(weights.dim() == 2 && weights.scalar_type() == at::kFloat && weights.is_contiguous(),
              "sample_candidates_rows: weights must be contiguous fp32 [C, m]");
  TORCH_CHECK(ids.sizes() == weights.sizes() && ids.scalar_type() == at::kLong &&
                  ids.is_contiguous(),
              "sample_candidates_rows: ids must be contiguous int64 [C, m]");
  TORCH_CHECK(u.dim() == 1 && u.size(0) == weights.size(0) && u.scalar_type() == at::kDouble &&
                  u.is_contiguous(),
              "sample_candidates_rows: u must be contiguous float64 [C]");
  const int64_t rows = weights.size(0), m = weights.size(1);
  TORCH_CHECK(m > 0, "sample_candidates_rows: no candidates");
  auto out = at::empty({rows}, ids.options());
  const float* wp = weights.data_ptr<float>();
  const int64_t* ip = ids.data_ptr<int64_t>();
  const double* up = u.data_ptr<double>();
  int64_t* op = out.data_ptr<int64_t>();
  parallel_for(0, rows, 1, [&](int64_t b, int64_t e) {
    std::vector<std::pair<int64_t, float>> by_id(m);
    std::vector<double> cdf(m);
    std::vector<uint8_t> seen;
    for (int64_t r = b; r < e; ++r) {
      // ids that are 0..m-1 (the whole vocabulary) are placed, not sorted: the same order
      const int64_t* row_ids = ip + r * m;
      bool placed = m >= kPlaceFrom;
      if (placed) {
        seen.assign(m, 0);
        for (int64_t j = 0; j < m && placed; ++j) {
          const int64_t id = row_ids[j];
          placed = id >= 0 && id < m && !seen[id];
          if (placed) {
            seen[id] = 1;
            by_id[id] = {id, wp[r * m + j]};
          }
        }
      }
      if (!placed) {
        for (int64_t j = 0; j < m; ++j) by_id[j] = {row_ids[j], wp[r * m + j]};
        std::sort(by_id.begin(), by_id.end(),
                  [](const auto& x, const auto& y) { return x.first < y.first; });
      }
      double total = 0.0;
      for (int64_t j = 0; j < m; ++j) cdf[j] = total += static_cast<double>(by_id[j].second);
      const double target = up[r] * cdf[m - 1];
      int64_t j = std::upper_bound(cdf.begin(), cdf.end(), target) - cdf.begin();
      int64_t last = 0;  // how many running totals are under the row's (torch's count, NaN alike)
      for (int64_t i = 0; i < m; ++i) last += cdf[i] < cdf[m - 1];
      op[r] = by_id[std::min(j, last)].first;
    }
  });
  return out;
}

std::tuple<at::Tensor, at::Tensor> argmax_rows(at::Tensor logits) {
  TORCH_CHECK(logits.dim() == 2 && logits.stride(1) == 1 && logits.size(1) > 0,
              "argmax_rows: logits must be [B, V] with contiguous rows and V > 0");
  const int64_t rows = logits.size(0), n = logits.size(1), stride = logits.stride(0);
  auto ids = at::empty({rows}, logits.options().dtype(at::kLong));
  auto maxima = at::empty({rows}, logits.options().dtype(at::kFloat));
  int64_t* ip = ids.data_ptr<int64_t>();
  float* mp = maxima.data_ptr<float>();
  dispatch(logits.scalar_type(), "argmax_rows", [&](auto tag) {
    using T = decltype(tag);
    const T* lp = logits.data_ptr<T>();
    parallel_for(0, rows, 1, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const RowMax m = argmax_row(lp + r * stride, n);
        ip[r] = m.at;
        mp[r] = m.value;
      }
    });
  });
  return {ids, maxima};
}

// The torch version (roseinfer/structured/grammar.py, apply_bitmask) expands every bit to a float
// through a lookup: [32, 49152] rows write 25 MB. This touches only the forbidden logits, a whole
// word of 32 at a time where the grammar allows none of them (most words, under a JSON schema).
void apply_token_bitmask(at::Tensor logits, at::Tensor bitmask, at::Tensor rows) {
  TORCH_CHECK(logits.dim() == 2 && logits.stride(1) == 1,
              "apply_token_bitmask: logits must be [B, V] with contiguous rows");
  const int64_t n = logits.size(1), stride = logits.stride(0), words = (n + 31) / 32;
  TORCH_CHECK(bitmask.dim() == 2 && bitmask.scalar_type() == at::kInt && bitmask.is_contiguous() &&
                  bitmask.size(1) == words,
              "apply_token_bitmask: bitmask must be contiguous int32 [R, ceil(V / 32)]");
  TORCH_CHECK(rows.dim() == 1 && rows.scalar_type() == at::kLong && rows.is_contiguous() &&
                  rows.size(0) == bitmask.size(0),
              "apply_token_bitmask: rows must be int64 [R]");
  const int64_t num_rows = rows.size(0);
  const int64_t* rp = rows.data_ptr<int64_t>();
  for (int64_t r = 0; r < num_rows; ++r)
    TORCH_CHECK(rp[r] >= 0 && rp[r] < logits.size(0), "apply_token_bitmask: row out of range");
  const uint32_t* bp = reinterpret_cast<const uint32_t*>(bitmask.data_ptr<int32_t>());
  dispatch(logits.scalar_type(), "apply_token_bitmask", [&](auto tag) {
    using T = decltype(tag);
    const T ninf = T(-std::numeric_limits<float>::infinity());
    T* lp = logits.data_ptr<T>();
    parallel_for(0, num_rows, 1, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        T* row = lp + rp[r] * stride;
        const uint32_t* mask = bp + r * words;
        for (int64_t w = 0; w < words; ++w) {
          uint32_t forbidden = ~mask[w];
          const int64_t base = w * 32;
          if (forbidden == 0xFFFFFFFFu && base + 32 <= n) {
            std::fill(row + base, row + base + 32, ninf);
            continue;
          }
          while (forbidden != 0) {
            const int64_t t = base + __builtin_ctz(forbidden);
            if (t >= n) break;
            row[t] = ninf;
            forbidden &= forbidden - 1;
          }
        }
      }
    });
  });
}

}  // namespace roseinfer
