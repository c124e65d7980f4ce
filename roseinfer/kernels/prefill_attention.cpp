// Causal prefill attention over the paged cache: a step's prefill chunks attend to their
// sequences' keys read in place from the cache blocks (no gathered copy, no mask tensor), a tile
// of queries against one block of keys at a time with an online softmax and fp32 accumulation
// (flash attention's order), so a chunk that follows cached tokens (a prefix-cache hit, the
// later chunks of a long prompt) pays for its own queries only.
//
// A task's query rows lie along the vectors' lanes (its queries transposed once), so each key
// or value element is broadcast from its row in the cache (no per-tile transposition) and the
// softmax keeps every row's max and sum in registers. GCC's vector extensions over fixed-size
// tiles: the same source runs AVX2 on one CPU and AVX-512 on another (-march=native). Caches of
// the queries' dtype or int8: fp32 rows are read in place, the others widened to fp32 once per
// key tile and task (an int8 row times its scale). Where the CPU has AVX512-BF16, bf16 queries
// take the tile of prefill_dpbf16.h instead: the same order, its products on bf16 pairs; where
// it has AMX too, the tile of prefill_amx.h: the same order, its products on AMX tiles.
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <type_traits>
#include <vector>

#include "amx.h"
#include "parallel.h"
#include "prefill_amx.h"
#include "prefill_attention.h"
#include "prefill_dpbf16.h"

namespace roseinfer {
namespace {

using namespace prefill;

// Which (sequence, KV head) groups of a call the pairs tile pairs ahead (PairedRows): those of
// at least kPairedTasks query tiles, each of which would pair every key tile again, up to
// kPairedBytes in all (about L3's size here). Groups of 2 tasks paired ahead measured 4-5 %
// slower, of 1 task 19-45 %: the pairs' round trip through memory for too few readers; a 512-token
// chunk's groups have 16 (BENCHMARKS.md, session 39).
constexpr int64_t kPairedTasks = 4;
constexpr int64_t kPairedBytes = int64_t{32} << 20;

// ot[d0 + i][c + r] += sum over j < n of value[j][d0 + i] * st[j][c + r] for DB dims: each load
// of a key's weights shared by the DB dims. n >= 1.
template <int DB>
[[gnu::noinline]] void dim_block_values(const float* __restrict st, int64_t RP, const float* const* value,
                             int64_t n, float* __restrict ot, int64_t c, int64_t d0) {
  assume(n >= 1);
  vfloat acc[DB][kRowVecs];
  for (int i = 0; i < DB; ++i)
    for (int r = 0; r < kRowVecs; ++r) acc[i][r] = vload(ot + (d0 + i) * RP + c + r * kLanes);
  for (int64_t j = 0; j < n; ++j) {
    vfloat p[kRowVecs];
    for (int r = 0; r < kRowVecs; ++r) p[r] = vload(st + j * RP + c + r * kLanes);
    const float* vj = value[j] + d0;
    for (int i = 0; i < DB; ++i) {
      const vfloat x = vsplat(vj[i]);
      for (int r = 0; r < kRowVecs; ++r) acc[i][r] += x * p[r];
    }
  }
  for (int i = 0; i < DB; ++i)
    for (int r = 0; r < kRowVecs; ++r) vstore(ot + (d0 + i) * RP + c + r * kLanes, acc[i][r]);
}

// Key and value rows t0..t0 + n - 1 of one (sequence, KV head) as fp32 rows: pointers into the
// cache where it holds fp32, else rows widened into the scratch (an int8 row times its scale).
template <typename C>
void tile_rows(const attention::KVView<C>& kv, int64_t t0, int64_t n, int64_t D, Scratch& w) {
  const int64_t BS = kv.block_size;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t t = t0 + j, b = t / BS, row = t % BS;
    const C* keys = kv.k_block(b);
    const C* value = kv.v_block(b) + row * D;
    if constexpr (std::is_same_v<C, float>) {
      w.krow[j] = keys + row * D;
      w.vrow[j] = value;
      continue;
    }
    float* k = w.k.data() + j * D;
    float* v = w.v.data() + j * D;
    if constexpr (std::is_same_v<C, int8_t>) {
      widen_int8_key(keys, row, D, BS, kv.k_scales(b)[row], k);
      widen_row(value, D, kv.v_scales(b)[row], v);
    } else {
      widen_row(keys + row * D, D, 1.f, k);
      widen_row(value, D, 1.f, v);
    }
    w.krow[j] = k;
    w.vrow[j] = v;
  }
}

// One task: queries [first, first + count) of a sequence (rows `q_row0`.. of q, at positions
// pos0..), the G query heads of KV head `kvh`, against the sequence's keys 0..pos of each.
// Rows along the lanes: a key element is broadcast to them from its row in place, and the
// softmax runs down each tile's keys with every row's max and sum in a register. Not inlined
// (nor its products): inlined into the task loop, GCC spilled the products' accumulators to the
// stack, 1.5x slower in an AVX2 build (BENCHMARKS.md, session 25).
template <typename T, typename C>
[[gnu::noinline]] void attend_tile(const T* q, T* out, const attention::KVView<C>& kv, int64_t q_row0,
                 int64_t count, int64_t pos0, int64_t kvh, const Layout& L, Scratch& w) {
  const int64_t G = L.H / L.KVH, D = L.D, BS = L.BS, rows = count * G;
  const int64_t RP = (rows + kRowBlock - 1) / kRowBlock * kRowBlock;
  // Whole blocks per key tile where they divide it, else one block; rounded up to whole key
  // blocks of the scores, whose extra keys read zeros.
  const int64_t KT = kKeyTile % BS == 0 ? kKeyTile : BS;
  const int64_t KP = (KT + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
  w.start(rows, RP, D, KP, G, pos0);
  w.qt.assign(D * RP, 0.f);
  w.k.resize(KP * D);
  w.v.resize(KP * D);
  w.zero.assign(D, 0.f);
  w.krow.resize(KP);
  w.vrow.resize(KP);
  // row r = i * G + g: query i of the tile, head kvh * G + g; the padding rows have zero queries
  // (their outputs are dropped).
  for (int64_t i = 0; i < count; ++i)
    for (int64_t g = 0; g < G; ++g) {
      const T* src = q + (q_row0 + i) * L.q_stride + (kvh * G + g) * D;
      for (int64_t d = 0; d < D; ++d) w.qt[d * RP + i * G + g] = to_float(src[d]) * L.scale;
    }
  const int64_t last = pos0 + count - 1;  // the tile's last query sees keys 0..last
  for (int64_t t0 = 0; t0 <= last; t0 += KT) {
    const int64_t n = std::min(KT, last + 1 - t0);  // keys of this tile anyone sees
    tile_rows(kv, t0, n, D, w);
    const int64_t nk = (n + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
    std::fill(w.krow.begin() + n, w.krow.begin() + nk, w.zero.data());
    for (int64_t c = 0; c < RP; c += kRowBlock)
      for (int64_t j = 0; j < nk; j += kKeyBlock)
        lanes::block_products<kRowVecs, kKeyBlock>(w.qt.data(), RP, w.krow.data() + j,
                                                   w.st.data() + j * RP, 0, D, c, false);
    const bool causal = t0 + n - 1 > pos0;  // some row's position is before the tile's end
    for (int64_t c = 0; c < RP; c += kLanes) softmax_rows(w, RP, D, c, n, t0, causal);
    for (int64_t c = 0; c < RP; c += kRowBlock) {
      int64_t d = 0;
      for (; d + kDimBlock <= D; d += kDimBlock)
        dim_block_values<kDimBlock>(w.st.data(), RP, w.vrow.data(), n, w.ot.data(), c, d);
      for (; d + 4 <= D; d += 4)
        dim_block_values<4>(w.st.data(), RP, w.vrow.data(), n, w.ot.data(), c, d);
      for (; d < D; ++d)
        dim_block_values<1>(w.st.data(), RP, w.vrow.data(), n, w.ot.data(), c, d);
    }
  }
  write_outputs(w, RP, out, q_row0, count, kvh, L);
}

// Which tile a call's tasks take ("auto": the fastest this CPU, dtype and shape allow; not the
// pairs on CPUs whose vdpbf16ps runs at half their FMAs' products, `bf16_pairs_by_fma`: there
// the fp32 tile was 14-35 % faster, BENCHMARKS.md, session 61).
enum class Tile { kFp32, kPairs, kAmx, kAmxEmulated };

Tile choose_tile(const std::string& name, bool bf16_queries, bool fp32_cache, int64_t D,
                 int64_t BS) {
  const bool pairs = kPairsTile && bf16_queries && !fp32_cache && D % 2 == 0;
  const bool amx_shape = kAmxTileBuilt && pairs && D % 32 == 0 && BS % 16 == 0;
  const bool amx = amx_shape && amx::kBuilt && amx::request();
  if (name == "auto")
    return amx ? Tile::kAmx : pairs && !bf16_pairs_by_fma() ? Tile::kPairs : Tile::kFp32;
  if (name == "fp32") return Tile::kFp32;
  TORCH_CHECK(name == "pairs" || name == "amx" || name == "amx_emulated",
              "tile must be 'auto', 'fp32', 'pairs', 'amx' or 'amx_emulated', not '", name, "'");
  TORCH_CHECK(pairs, "tile '", name, "' needs AVX512-BF16, bf16 queries, a bf16 or int8 cache "
              "and an even head_dim");
  if (name == "pairs") return Tile::kPairs;
  TORCH_CHECK(amx_shape, "tile '", name,
              "' needs head_dim a multiple of 32 and block_size a multiple of 16");
  TORCH_CHECK(name == "amx_emulated" || amx, "tile 'amx': this CPU or kernel offers no AMX");
  return name == "amx" ? Tile::kAmx : Tile::kAmxEmulated;
}

const char* name_of(Tile tile) {
  switch (tile) {
    case Tile::kAmx: return "amx";
    case Tile::kAmxEmulated: return "amx_emulated";
    case Tile::kPairs: return "pairs";
    default: return "fp32";
  }
}

}  // namespace

std::string paged_prefill_tile(at::Tensor q, at::Tensor k_cache, const std::string& tile) {
  TORCH_CHECK(q.dim() == 3 && k_cache.dim() == 4, "q must be [n, H, D], the cache 4-d");
  return name_of(choose_tile(tile, q.scalar_type() == at::kBFloat16,
                             k_cache.scalar_type() == at::kFloat, q.size(2), k_cache.size(2)));
}

void write_kv_cache(at::Tensor k, at::Tensor v, at::Tensor k_cache,
                    at::Tensor v_cache, at::Tensor slot_mapping,
                    c10::optional<at::Tensor> k_scale, c10::optional<at::Tensor> v_scale) {
  TORCH_CHECK(k.dim() == 3 && k.sizes() == v.sizes() && k.scalar_type() == v.scalar_type(),
              "k and v must be [n, KVH, D], alike");
  TORCH_CHECK(k.stride(2) == 1 && v.stride(2) == 1 && k.stride(1) == k.size(2) &&
                  v.stride(1) == v.size(2),
              "k and v must have contiguous heads");
  TORCH_CHECK(k_cache.dim() == 4 && k_cache.sizes() == v_cache.sizes() &&
                  k_cache.is_contiguous() && v_cache.is_contiguous() &&
                  k_cache.size(1) == k.size(1) && k_cache.size(3) == k.size(2),
              "the caches must be contiguous [blocks, KVH, block_size, D], both alike, k's heads");
  const bool int8_cache = attention::int8_cache_scales(k_cache, k_scale, v_scale);
  TORCH_CHECK(v_cache.scalar_type() == k_cache.scalar_type() &&
                  (int8_cache || k_cache.scalar_type() == k.scalar_type()),
              "the caches must hold k's dtype, or int8");
  const int64_t n = k.size(0), KVH = k.size(1), D = k.size(2), BS = k_cache.size(2);
  if (int8_cache)
    TORCH_CHECK(D % 4 == 0 && D <= attention::kMaxStackRow,
                "an int8 cache needs head_dim a multiple of 4, at most ", attention::kMaxStackRow);
  TORCH_CHECK(slot_mapping.scalar_type() == at::kLong && slot_mapping.dim() == 1 &&
                  slot_mapping.numel() == n && slot_mapping.is_contiguous(),
              "slot_mapping must be a contiguous int64 [n]");
  const int64_t* slots = slot_mapping.data_ptr<int64_t>();
  const int64_t num_slots = k_cache.size(0) * BS;
  for (int64_t i = 0; i < n; ++i)
    TORCH_CHECK(slots[i] >= 0 && slots[i] < num_slots, "slot ", slots[i], " is not in the cache");
  dispatch(k.scalar_type(), "write_kv_cache", [&](auto tag) {
    using T = decltype(tag);
    const T* kp = k.data_ptr<T>();
    const T* vp = v.data_ptr<T>();
    auto write = [&](auto* kc, auto* vc, float* ks, float* vs) {
      parallel_for(0, n * KVH, 64, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t i = r / KVH, h = r % KVH;
          attention::write_kv_row(kp + i * k.stride(0) + h * D, vp + i * v.stride(0) + h * D,
                                  slots[i], h, D, KVH, BS, kc, vc, ks, vs);
        }
      });
    };
    if (int8_cache)
      write(k_cache.data_ptr<int8_t>(), v_cache.data_ptr<int8_t>(), k_scale->data_ptr<float>(),
            v_scale->data_ptr<float>());
    else
      write(k_cache.data_ptr<T>(), v_cache.data_ptr<T>(), nullptr, nullptr);
  });
}

at::Tensor paged_prefill_attention(at::Tensor q, at::Tensor k_cache,
                                      at::Tensor v_cache, at::Tensor block_tables,
                                      at::Tensor query_start_loc, at::Tensor context_lens,
                                      double scale, c10::optional<at::Tensor> k_scale,
                                      c10::optional<at::Tensor> v_scale,
                                      const std::string& tile_name) {
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
  const Tile tile = choose_tile(tile_name, q.scalar_type() == at::kBFloat16,
                                k_cache.scalar_type() == at::kFloat, L.D, BS);
  // Tasks (sequence, KV head, query tile), each thread taking the next when it is free. The
  // tasks of one (sequence, KV head) run one after another, so a thread's L2 keeps the keys and
  // values they all read (2,000 keys of a head: 512 KB); interleaved, 4 sequences' 512-token
  // chunks at 2,000 keys took 18 % longer (BENCHMARKS.md, session 39). Within a group, and
  // between groups by their sequences' lengths, the tasks that see more keys go first, so the
  // threads end together.
  struct Task {
    int64_t seq, kvh, first, count;
  };
  std::vector<Task> tasks;
  const int64_t query_tile =
      tile == Tile::kAmx || tile == Tile::kAmxEmulated ? kAmxQueryTile : kQueryTile;
  for (int64_t s = 0; s < S; ++s) {
    const int64_t len = qs[s + 1] - qs[s];
    TORCH_CHECK(len >= 0 && len <= cl[s] && (cl[s] + BS - 1) / BS <= max_blocks,
                "sequence ", s, ": its queries must be its last tokens, its blocks in its table");
    for (int64_t first = 0; first < len; first += query_tile)
      for (int64_t h = 0; h < L.KVH; ++h)
        tasks.push_back({s, h, first, std::min(query_tile, len - first)});
  }
  std::sort(tasks.begin(), tasks.end(), [&](const Task& a, const Task& b) {
    if (cl[a.seq] != cl[b.seq]) return cl[a.seq] > cl[b.seq];
    if (a.seq != b.seq) return a.seq < b.seq;
    if (a.kvh != b.kvh) return a.kvh < b.kvh;
    return a.first > b.first;
  });
  auto out = at::empty(q.sizes(), q.options());
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
      const auto view = [&](int64_t seq, int64_t h) {  // (sequence, KV head)'s blocks
        return attention::KVView<C>{k + h * head_rows,
                                    v + h * head_rows,
                                    k_scales == nullptr ? nullptr : k_scales + h * BS,
                                    v_scales == nullptr ? nullptr : v_scales + h * BS,
                                    tables + seq * max_blocks,
                                    cl[seq],
                                    BS,
                                    block_stride,
                                    L.KVH * BS};
      };
      constexpr bool pairs_types =
          kPairsTile && std::is_same_v<T, c10::BFloat16> && !std::is_same_v<C, float>;
      // The pairs tile's keys and values, made once for the (sequence, KV head) groups of at
      // least kPairedTasks tasks while they fit kPairedBytes (a step of many long sequences
      // would otherwise hold a copy of their whole cache); the others pair their own tiles. A
      // key tile per job.
      PairedRows paired;
      if constexpr (pairs_types) {
        if (tile == Tile::kPairs || tile == Tile::kAmx || tile == Tile::kAmxEmulated) {
          // The AMX tile's values also paired and transposed once per group, where its key
          // tiles are kKeyTile keys (else each task transposes its own).
          const bool tiles = tile != Tile::kPairs && kKeyTile % BS == 0;
          const int64_t key_bytes =
              L.D / 2 * 4 * (tiles ? 2 : 1) + (int8_cache ? L.D * 2 + 8 : 0);
          int64_t bytes = 0;
          std::vector<int64_t> lens;
          std::vector<std::pair<int64_t, int64_t>> jobs;  // (group, first key)
          for (int64_t s = 0; s < S; ++s)
            for (int64_t h = 0; h < L.KVH; ++h) {
              const bool shared = qs[s + 1] - qs[s] > (kPairedTasks - 1) * query_tile &&
                                  bytes + (cl[s] + 15) * key_bytes <= kPairedBytes;
              bytes += shared ? (cl[s] + 15) * key_bytes : 0;
              lens.push_back(shared ? cl[s] : 0);
              for (int64_t t0 = 0; shared && t0 < cl[s]; t0 += kKeyTile)
                jobs.emplace_back(s * L.KVH + h, t0);
            }
          paired.allocate(lens, L.D, int8_cache, tiles);
          parallel_for(0, static_cast<int64_t>(jobs.size()), 1, [&](int64_t begin, int64_t end) {
            LineVector<c10::BFloat16> vb;
            LineVector<uint32_t> pairs;
            for (int64_t i = begin; i < end; ++i) {
              const auto [g, t0] = jobs[i];
              const int64_t seq = g / L.KVH, n = std::min(kKeyTile, cl[seq] - t0);
              const PairedKV dst = paired.of(g, L.D).at(t0, L.D);
              pair_rows(view(seq, g % L.KVH), t0, n, L.D, dst, vb);
#if defined(__AVX512BF16__) && defined(__AVX512BW__)  // kAmxTileBuilt
              if (tiles) make_value_tile(dst, n, L.D, pairs);
#endif
            }
          });
        }
      }
      std::atomic<int64_t> next{0};
      parallel_for(0, workers, 1, [&](int64_t, int64_t) {
        Scratch scratch;
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
        if (tile == Tile::kAmx) amx::AmxTiles::configure();
#endif
        for (int64_t t = next++; t < num_tasks; t = next++) {
          const Task& task = tasks[t];
          const int64_t len = qs[task.seq + 1] - qs[task.seq];
          const int64_t pos0 = cl[task.seq] - len + task.first;  // the first query's position
          const int64_t h = task.kvh;
          const attention::KVView<C> kv = view(task.seq, h);
          const int64_t q_row0 = qs[task.seq] + task.first;
          if constexpr (pairs_types) {
            if (tile == Tile::kPairs) {
              attend_tile_pairs(qp, op, kv, paired.of(task.seq * L.KVH + h, L.D), q_row0,
                                task.count, pos0, h, L, scratch);
              continue;
            }
#if defined(__AVX512BF16__) && defined(__AVX512BW__)  // kAmxTileBuilt
            if (tile == Tile::kAmxEmulated) {
              attend_tile_amx<amx::EmulatedTiles>(qp, op, kv, paired.of(task.seq * L.KVH + h, L.D),
                                                  q_row0, task.count, pos0, h, L, scratch);
              continue;
            }
#endif
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
            if (tile == Tile::kAmx) {
              attend_tile_amx<amx::AmxTiles>(qp, op, kv, paired.of(task.seq * L.KVH + h, L.D),
                                             q_row0, task.count, pos0, h, L, scratch);
              continue;
            }
#endif
          }
          attend_tile(qp, op, kv, q_row0, task.count, pos0, h, L, scratch);
        }
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
        if (tile == Tile::kAmx) amx::AmxTiles::release();
#endif
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
