// Causal prefill attention over the paged cache: a step's prefill chunks attend to their
// sequences' keys read in place from the cache blocks (no gathered copy, no mask tensor), a tile
// of queries against one block of keys at a time with an online softmax and fp32 accumulation
// (flash attention's order), so a chunk that follows cached tokens (a prefix-cache hit, the
// later chunks of a long prompt) pays for its own queries only.
//
// GCC's vector extensions over fixed-size tiles: the same source runs AVX2 on one CPU and
// AVX-512 on another (-march=native). Caches of the queries' dtype or int8 (each key tile is
// widened to fp32 once per task, an int8 row times its scale).
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "attention_kv.h"
#include "vec.h"

namespace roseinfer {
namespace {

constexpr int64_t kQueryTile = 32;  // queries per task: G * 32 rows share each key tile's load
constexpr int64_t kKeyTile = 64;  // keys per step of the online softmax (whole cache blocks)

// GCC's vector extensions: one register of floats, 16 lanes with AVX-512 and 8 otherwise (two
// SSE halves where the CPU has no AVX): the same source for every x86 CPU this builds on.
#if defined(__AVX512F__)
constexpr int64_t kLanes = 16;
#else
constexpr int64_t kLanes = 8;
#endif
typedef float vfloat __attribute__((vector_size(kLanes * sizeof(float))));
typedef int32_t vint __attribute__((vector_size(kLanes * sizeof(int32_t))));

inline vfloat vload(const float* p) {
  vfloat v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void vstore(float* p, vfloat v) { std::memcpy(p, &v, sizeof(v)); }
inline vfloat vsplat(float x) { return vfloat{} + x; }

// e^x for x <= 0 (scores minus their row's max), as exp16 computes it: 2^n * 2^f with 2^f by
// its degree-6 Taylor polynomial (relative error < 2e-7), n rounded to nearest by adding and
// taking away 1.5 * 2^23 (exact for |x| < 2^22); x clamped to -87, where e^x is still normal.
template <typename V, typename I>
inline V exp_nonpositive(V x) {
  x = x < -87.0f ? V{} - 87.0f : x;
  const V t = x * 1.44269504088896341f;
  const V n = (t + 12582912.0f) - 12582912.0f;
  const V f = t - n;
  V p = V{} + kExp2Poly[0];
  for (int i = 1; i < 7; ++i) p = p * f + kExp2Poly[i];
  const I bits = (__builtin_convertvector(n, I) + 127) << 23;  // 2^n, n in [-126, 0]
  V scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}
inline float exp_nonpositive(float x) {
  typedef float v1 __attribute__((vector_size(sizeof(float))));
  typedef int32_t i1 __attribute__((vector_size(sizeof(int32_t))));
  return exp_nonpositive<v1, i1>(v1{x})[0];
}

// A task's scratch: its queries (scaled), accumulators and the current key block, all fp32.
struct Scratch {
  std::vector<float> q, o, m, l, kt, v, s;
  std::vector<int64_t> seen;
  void size(int64_t rows, int64_t D, int64_t KT) {
    q.resize(rows * D);
    o.resize(rows * D);
    m.resize(rows);
    l.resize(rows);
    kt.resize(D * KT);
    v.resize(KT * D);
    s.resize(rows * KT);
    seen.resize(rows);
  }
};

// Scores of `rows` query rows against a tile of KT keys: s[r][j] = q[r] . k[j], k held
// transposed (kt[d][j]) so that a register holds a row's scores of kLanes keys. 16 keys and RB
// rows at a time: RB * 16 / kLanes accumulators, each load of kt shared by RB rows.
template <int64_t KT>
void tile_scores(const float* __restrict q, const float* __restrict kt, float* __restrict s,
                 int64_t rows, int64_t D) {
  constexpr int64_t NJ = 16 / kLanes, RB = kLanes == 8 ? 6 : 8;
  static_assert(KT % 16 == 0);
  for (int64_t c = 0; c < KT; c += 16) {
    int64_t r = 0;
    for (; r + RB <= rows; r += RB) {
      vfloat acc[RB][NJ] = {};
      for (int64_t d = 0; d < D; ++d) {
        vfloat k[NJ];
        for (int64_t j = 0; j < NJ; ++j) k[j] = vload(kt + d * KT + c + j * kLanes);
        for (int64_t i = 0; i < RB; ++i) {
          const vfloat qd = vsplat(q[(r + i) * D + d]);
          for (int64_t j = 0; j < NJ; ++j) acc[i][j] += qd * k[j];
        }
      }
      for (int64_t i = 0; i < RB; ++i)
        for (int64_t j = 0; j < NJ; ++j) vstore(s + (r + i) * KT + c + j * kLanes, acc[i][j]);
    }
    for (; r < rows; ++r) {
      vfloat acc[NJ] = {};
      for (int64_t d = 0; d < D; ++d) {
        const vfloat qd = vsplat(q[r * D + d]);
        for (int64_t j = 0; j < NJ; ++j) acc[j] += qd * vload(kt + d * KT + c + j * kLanes);
      }
      for (int64_t j = 0; j < NJ; ++j) vstore(s + r * KT + c + j * kLanes, acc[j]);
    }
  }
}

// o[r] += sum over j < n[r] of p[r][j] v[j] (p is 0 from n[r] on): two rows at a time share each
// load of a value row, over four registers of their outputs at a time.
template <int64_t D>
void add_values(const float* __restrict p, const float* __restrict v, float* __restrict o,
                int64_t rows, int64_t BS, const int64_t* __restrict n) {
  constexpr int64_t ND = D / kLanes, VB = ND < 4 ? ND : 4;
  static_assert(ND % VB == 0);
  int64_t r = 0;
  for (; r + 2 <= rows; r += 2) {
    const int64_t keys = std::max(n[r], n[r + 1]);
    for (int64_t c = 0; c < ND; c += VB) {
      vfloat acc[2][VB];
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t b = 0; b < VB; ++b) acc[i][b] = vload(o + (r + i) * D + (c + b) * kLanes);
      for (int64_t j = 0; j < keys; ++j) {
        const vfloat p0 = vsplat(p[r * BS + j]), p1 = vsplat(p[(r + 1) * BS + j]);
        for (int64_t b = 0; b < VB; ++b) {
          const vfloat x = vload(v + j * D + (c + b) * kLanes);
          acc[0][b] += p0 * x;
          acc[1][b] += p1 * x;
        }
      }
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t b = 0; b < VB; ++b) vstore(o + (r + i) * D + (c + b) * kLanes, acc[i][b]);
    }
  }
  for (; r < rows; ++r) {
    vfloat acc[ND];
    for (int64_t i = 0; i < ND; ++i) acc[i] = vload(o + r * D + i * kLanes);
    for (int64_t j = 0; j < n[r]; ++j) {
      const vfloat pj = vsplat(p[r * BS + j]);
      for (int64_t i = 0; i < ND; ++i) acc[i] += pj * vload(v + j * D + i * kLanes);
    }
    for (int64_t i = 0; i < ND; ++i) vstore(o + r * D + i * kLanes, acc[i]);
  }
}

// The run-time sized versions, for other block sizes and head dims.
void block_scores_any(const float* q, const float* kt, float* s, int64_t rows, int64_t D,
                      int64_t BS) {
  for (int64_t r = 0; r < rows; ++r) {
    float* sr = s + r * BS;
    std::fill(sr, sr + BS, 0.f);
    for (int64_t d = 0; d < D; ++d)
      for (int64_t j = 0; j < BS; ++j) sr[j] += q[r * D + d] * kt[d * BS + j];
  }
}

void add_values_any(const float* p, const float* v, float* o, int64_t rows, int64_t D,
                    int64_t BS, const int64_t* n) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n[r]; ++j)
      for (int64_t d = 0; d < D; ++d) o[r * D + d] += p[r * BS + j] * v[j * D + d];
}

// One row's scores of this block (keys < `keys` valid) into exp(s - new max), in place; the
// row's running max and sum, and its outputs' rescale factor (returned).
inline float softmax_block(float* s, int64_t keys, float& m, float& l) {
  float mx = m;
  for (int64_t j = 0; j < keys; ++j) mx = std::max(mx, s[j]);
  const float alpha = exp_nonpositive(m - mx);  // ~0 for the first block: m = -inf
  float sum = 0.f;
  int64_t j = 0;
  vfloat sums = {};
  for (; j + kLanes <= keys; j += kLanes) {
    const vfloat e = exp_nonpositive<vfloat, vint>(vload(s + j) - mx);
    vstore(s + j, e);
    sums += e;
  }
  for (int64_t i = 0; i < kLanes; ++i) sum += sums[i];
  for (; j < keys; ++j) sum += (s[j] = exp_nonpositive(s[j] - mx));
  l = l * alpha + sum;
  m = mx;
  return alpha;
}

struct Layout {
  int64_t H, KVH, D, BS;
  int64_t q_stride;  // elements between q's rows (a view of the fused qkv output, say)
  float scale;
};

// Keys t0..t0 + n - 1 of one (sequence, KV head) as fp32: transposed into kt [D][KT] (zero past
// n, so a row's scores there are 0 and ignored) and values as rows into v [n][D].
template <typename C>
void load_tile(const attention::KVView<C>& kv, int64_t t0, int64_t n, int64_t KT, int64_t D,
               float* kt, float* v) {
  const int64_t BS = kv.block_size;
  for (int64_t j = 0; j < KT; ++j) {
    if (j >= n) {  // past the tile's keys (and maybe past the sequence's table)
      for (int64_t d = 0; d < D; ++d) kt[d * KT + j] = 0.f;
      continue;
    }
    const int64_t t = t0 + j, b = t / BS, row = t % BS;
    const C* keys = kv.k_block(b);
    const C* value = kv.v_block(b) + row * D;
    if constexpr (std::is_same_v<C, int8_t>) {
      const float ks = kv.k_scales(b)[row], vs = kv.v_scales(b)[row];
      for (int64_t d = 0; d < D; ++d) kt[d * KT + j] = attention::int8_key(keys, row, d, BS) * ks;
      for (int64_t d = 0; d < D; ++d) v[j * D + d] = static_cast<float>(value[d]) * vs;
    } else {
      for (int64_t d = 0; d < D; ++d) kt[d * KT + j] = to_float(keys[row * D + d]);
      for (int64_t d = 0; d < D; ++d) v[j * D + d] = to_float(value[d]);
    }
  }
}

// One task: queries [first, first + count) of a sequence (rows `q_row0`.. of q, at positions
// pos0..), the G query heads of KV head `kvh`, against the sequence's keys 0..pos of each.
template <typename T, typename C>
void attend_tile(const T* q, T* out, const attention::KVView<C>& kv, int64_t q_row0,
                 int64_t count, int64_t pos0, int64_t kvh, const Layout& L, Scratch& w) {
  const int64_t G = L.H / L.KVH, D = L.D, BS = L.BS, rows = count * G;
  // Whole blocks per key tile where they divide it, else one block.
  const int64_t KT = kKeyTile % BS == 0 ? kKeyTile : BS;
  w.size(rows, D, KT);
  // row r = i * G + g: query i of the tile, head kvh * G + g
  for (int64_t i = 0; i < count; ++i)
    for (int64_t g = 0; g < G; ++g) {
      const T* src = q + (q_row0 + i) * L.q_stride + (kvh * G + g) * D;
      float* dst = w.q.data() + (i * G + g) * D;
      for (int64_t d = 0; d < D; ++d) dst[d] = to_float(src[d]) * L.scale;
    }
  std::fill(w.o.begin(), w.o.end(), 0.f);
  std::fill(w.m.begin(), w.m.end(), -std::numeric_limits<float>::infinity());
  std::fill(w.l.begin(), w.l.end(), 0.f);
  const int64_t last = pos0 + count - 1;  // the tile's last query sees keys 0..last
  for (int64_t t0 = 0; t0 <= last; t0 += KT) {
    const int64_t n = std::min(KT, last + 1 - t0);  // keys of this tile anyone sees
    float* kt = w.kt.data();
    load_tile(kv, t0, n, KT, D, kt, w.v.data());
    if (KT == kKeyTile)
      tile_scores<kKeyTile>(w.q.data(), kt, w.s.data(), rows, D);
    else if (KT == 16)
      tile_scores<16>(w.q.data(), kt, w.s.data(), rows, D);
    else
      block_scores_any(w.q.data(), kt, w.s.data(), rows, D, KT);
    // The online softmax: each row's running max m, sum l and output o rescaled as m grows.
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t pos = pos0 + r / G;
      const int64_t keys = std::min(n, pos - t0 + 1);  // causal: keys up to pos
      w.seen[r] = std::max<int64_t>(keys, 0);
      float* row = w.s.data() + r * KT;
      std::fill(row + w.seen[r], row + KT, 0.f);  // no weight past the row's own position
      if (keys <= 0) continue;
      const float alpha = softmax_block(row, keys, w.m[r], w.l[r]);
      if (alpha != 1.f) {
        float* o = w.o.data() + r * D;
        for (int64_t d = 0; d < D; ++d) o[d] *= alpha;
      }
    }
    if (D == 64)
      add_values<64>(w.s.data(), w.v.data(), w.o.data(), rows, KT, w.seen.data());
    else if (D == 128)
      add_values<128>(w.s.data(), w.v.data(), w.o.data(), rows, KT, w.seen.data());
    else
      add_values_any(w.s.data(), w.v.data(), w.o.data(), rows, D, KT, w.seen.data());
  }
  for (int64_t i = 0; i < count; ++i)
    for (int64_t g = 0; g < G; ++g) {
      const int64_t r = i * G + g;
      const float inv = 1.f / w.l[r];
      T* dst = out + ((q_row0 + i) * L.H + kvh * G + g) * D;
      for (int64_t d = 0; d < D; ++d) dst[d] = static_cast<T>(w.o[r * D + d] * inv);
    }
}

}  // namespace

torch::Tensor paged_prefill_attention(torch::Tensor q, torch::Tensor k_cache,
                                      torch::Tensor v_cache, torch::Tensor block_tables,
                                      torch::Tensor query_start_loc, torch::Tensor context_lens,
                                      double scale, c10::optional<torch::Tensor> k_scale,
                                      c10::optional<torch::Tensor> v_scale) {
  TORCH_CHECK(q.dim() == 3 && q.stride(2) == 1 && q.stride(1) == q.size(2),
              "q must be [n, H, D] with contiguous rows");
  TORCH_CHECK(k_cache.dim() == 4 && k_cache.sizes() == v_cache.sizes() &&
                  k_cache.is_contiguous() && v_cache.is_contiguous(),
              "the caches must be contiguous [blocks, KVH, block_size, D], both alike");
  const bool int8_cache = attention::int8_cache_scales(k_cache, k_scale, v_scale);
  TORCH_CHECK(v_cache.scalar_type() == k_cache.scalar_type() &&
                  (int8_cache || k_cache.scalar_type() == q.scalar_type()),
              "the caches must hold q's dtype, or int8");
  if (int8_cache) {
    TORCH_CHECK(q.size(2) % 4 == 0, "an int8 cache needs head_dim a multiple of 4");
  }
  TORCH_CHECK(k_cache.size(3) == q.size(2) && q.size(1) % k_cache.size(1) == 0,
              "q's head_dim must be the cache's, its heads a multiple of the KV heads");
  TORCH_CHECK(block_tables.scalar_type() == at::kLong && block_tables.dim() == 2 &&
                  block_tables.is_contiguous(),
              "block_tables must be a contiguous int64 [S, max_blocks]");
  const int64_t S = block_tables.size(0);
  TORCH_CHECK(query_start_loc.scalar_type() == at::kLong && query_start_loc.numel() == S + 1 &&
                  context_lens.scalar_type() == at::kLong && context_lens.numel() == S,
              "query_start_loc must be int64 [S + 1] and context_lens int64 [S]");
  const auto qsl = query_start_loc.contiguous();
  const auto ctx = context_lens.contiguous();
  const int64_t* qs = qsl.data_ptr<int64_t>();
  const int64_t* cl = ctx.data_ptr<int64_t>();
  TORCH_CHECK(qs[0] == 0 && qs[S] == q.size(0), "query_start_loc must run from 0 to n");
  const int64_t BS = k_cache.size(2), max_blocks = block_tables.size(1);
  const Layout L{q.size(1), k_cache.size(1), q.size(2), BS, q.stride(0), static_cast<float>(scale)};
  // Tasks (sequence, KV head, query tile); the tiles of later queries see more keys, so the
  // list runs longest first and each thread takes the next task when it is free.
  struct Task {
    int64_t seq, kvh, first, count;
  };
  std::vector<Task> tasks;
  for (int64_t s = 0; s < S; ++s) {
    const int64_t len = qs[s + 1] - qs[s];
    TORCH_CHECK(len >= 0 && len <= cl[s] && (cl[s] + BS - 1) / BS <= max_blocks,
                "sequence ", s, ": its queries must be its last tokens, its blocks in its table");
    for (int64_t first = 0; first < len; first += kQueryTile)
      for (int64_t h = 0; h < L.KVH; ++h)
        tasks.push_back({s, h, first, std::min(kQueryTile, len - first)});
  }
  std::stable_sort(tasks.begin(), tasks.end(), [&](const Task& a, const Task& b) {
    return cl[a.seq] - (qs[a.seq + 1] - qs[a.seq]) + a.first >
           cl[b.seq] - (qs[b.seq + 1] - qs[b.seq]) + b.first;
  });
  auto out = torch::empty(q.sizes(), q.options());
  const int64_t* tables = block_tables.data_ptr<int64_t>();
  dispatch(q.scalar_type(), "paged_prefill_attention", [&](auto tag) {
    using T = decltype(tag);
    const T* qp = q.data_ptr<T>();
    T* op = out.data_ptr<T>();
    const int64_t num_tasks = static_cast<int64_t>(tasks.size());
    const int64_t workers = std::min<int64_t>(at::get_num_threads(), num_tasks);
    // k, v: the cache's blocks; k_scales, v_scales: an int8 cache's row scales, else nullptr.
    auto attend = [&](const auto* k, const auto* v, const float* k_scales,
                      const float* v_scales) {
      using C = std::remove_const_t<std::remove_pointer_t<decltype(k)>>;
      const int64_t head_rows = BS * L.D, block_stride = L.KVH * head_rows;
      std::atomic<int64_t> next{0};
      at::parallel_for(0, workers, 1, [&](int64_t, int64_t) {
        Scratch scratch;
        for (int64_t t = next++; t < num_tasks; t = next++) {
          const Task& task = tasks[t];
          const int64_t len = qs[task.seq + 1] - qs[task.seq];
          const int64_t pos0 = cl[task.seq] - len + task.first;  // the first query's position
          const int64_t h = task.kvh;
          const attention::KVView<C> kv{k + h * head_rows,
                                        v + h * head_rows,
                                        k_scales == nullptr ? nullptr : k_scales + h * BS,
                                        v_scales == nullptr ? nullptr : v_scales + h * BS,
                                        tables + task.seq * max_blocks,
                                        cl[task.seq],
                                        BS,
                                        block_stride,
                                        L.KVH * BS};
          attend_tile(qp, op, kv, qs[task.seq] + task.first, task.count, pos0, h, L, scratch);
        }
      });
    };
    if (int8_cache)
      attend(k_cache.data_ptr<int8_t>(), v_cache.data_ptr<int8_t>(), k_scale->data_ptr<float>(),
             v_scale->data_ptr<float>());
    else
      attend(k_cache.data_ptr<T>(), v_cache.data_ptr<T>(), nullptr, nullptr);
  });
  return out;
}

}  // namespace roseinfer
