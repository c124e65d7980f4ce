// How the decode kernel (`paged_attention.cpp`) shares a step's (sequence, KV head) tasks among
// threads: whole tasks in runs of about equal keys, or, where whole tasks cannot balance the
// runs, the tasks' keys cut into runs whose parts are merged after by their softmax max and sum.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace roseinfer::attention {

constexpr int64_t kTaskOverhead = 16;  // keys' worth of per-task work (q, softmax, output)

// Task boundaries [parts + 1] splitting the (sequence, KV head) tasks into `parts` runs of
// about equal work, a task costing its sequence's keys plus kTaskOverhead. An even split by
// task count can give one thread most of the keys when the batch's lengths differ (half of 32
// sequences at 400 keys, half at 50: a step's attention 11.3 -> 7.4 ms with the int8 cache,
// benchmarks/decode_attention.py's "mixed lengths").
inline std::vector<int64_t> balanced_ranges(const int64_t* lens, int64_t num_seqs,
                                            int64_t num_kv_heads, int64_t parts) {
  parts = std::max<int64_t>(1, std::min(parts, num_seqs * num_kv_heads));
  int64_t total = 0;
  for (int64_t s = 0; s < num_seqs; ++s) total += lens[s] + kTaskOverhead;
  total *= num_kv_heads;
  std::vector<int64_t> bounds{0};
  int64_t done = 0;
  for (int64_t task = 0; task < num_seqs * num_kv_heads; ++task) {
    const int64_t work = lens[task / num_kv_heads] + kTaskOverhead;
    done += work;
    // A part ends before the task whose midpoint reaches the part's share of the work (after
    // it where the part would be empty): equal tasks split evenly, 3 : 3 for two sequences'
    // 6 tasks on 2 threads (this ended parts after that task until session 33: 4 : 2).
    while (int64_t(bounds.size()) < parts &&
           (2 * done - work) * parts >= 2 * int64_t(bounds.size()) * total)
      bounds.push_back(task > bounds.back() ? task : task + 1);
  }
  while (int64_t(bounds.size()) <= parts) bounds.push_back(num_seqs * num_kv_heads);
  return bounds;
}

// The most work a run of whole tasks may hold, in equal shares of the step's (`threads` of them),
// before the tasks' keys are cut instead: one sequence's 3 KV heads give one run two of them on
// 2 threads (1.33 shares) and one on 16 (5.3); a 2,000-key sequence's beside a 10-key one's,
// 1.32 on 2 threads.
constexpr double kMaxRunShares = 1.25;

// Whether the runs `bounds` (balanced_ranges) gives `threads` threads stay within
// kMaxRunShares.
inline bool runs_balanced(const int64_t* lens, int64_t num_kv_heads,
                          const std::vector<int64_t>& bounds, int64_t threads) {
  auto work = [&](int64_t task) { return lens[task / num_kv_heads] + kTaskOverhead; };
  int64_t total = 0, heaviest = 0;
  for (size_t r = 0; r + 1 < bounds.size(); ++r) {
    int64_t run = 0;
    for (int64_t task = bounds[r]; task < bounds[r + 1]; ++task) run += work(task);
    total += run;
    heaviest = std::max(heaviest, run);
  }
  return double(heaviest) * double(threads) <= kMaxRunShares * double(total);
}

// A run of one (sequence, KV head) task's keys: `len` keys from block b0 of its block table
// (the task's whole length where b0 is 0 and the piece is the whole task), its sequence and KV
// head worked out once where the piece is made.
struct Piece {
  int64_t task, seq, kv_head, b0, len;
};

// The tasks attended in parts: slot i of `parts` holds a part's acc [G, D] (its query heads'
// values weighted by the part's own softmax) and row_stats [G, 2] (the part's max score and
// its sum of exp(score - max)) for task part_task[i], -1 where the slot is unused; a task's
// slots are adjacent. done(task, acc) gets each task's merged acc [G, D], each part weighted by
// its sum times e^(its max - the task's max).
template <typename Done>
void merge_parts(const float* parts, const std::vector<int64_t>& part_task, int64_t group,
                 int64_t head_dim, const Done& done) {
  const int64_t acc_size = group * head_dim, slot_size = acc_size + 2 * group;
  const int64_t n = int64_t(part_task.size());
  std::vector<float> merged(acc_size), weight(n);
  for (int64_t i = 0; i < n;) {
    if (part_task[i] < 0) {
      ++i;
      continue;
    }
    int64_t end = i + 1;
    while (end < n && (part_task[end] == part_task[i] || part_task[end] < 0)) ++end;
    for (int64_t g = 0; g < group; ++g) {
      float top = -std::numeric_limits<float>::infinity(), total = 0.f;
      for (int64_t p = i; p < end; ++p)
        if (part_task[p] >= 0) top = std::max(top, parts[p * slot_size + acc_size + 2 * g]);
      for (int64_t p = i; p < end; ++p) {
        const float* stats = parts + p * slot_size + acc_size + 2 * g;
        weight[p] = part_task[p] < 0 ? 0.f : stats[1] * std::exp(stats[0] - top);
        total += weight[p];
      }
      float* out = merged.data() + g * head_dim;
      std::fill(out, out + head_dim, 0.f);
      for (int64_t p = i; p < end; ++p) {
        if (part_task[p] < 0) continue;
        const float* acc = parts + p * slot_size + g * head_dim;
        const float share = weight[p] / total;
        for (int64_t d = 0; d < head_dim; ++d) out[d] += share * acc[d];
      }
    }
    done(part_task[i], merged.data());
    i = end;
  }
}

// The length of a step's longest sequence from which, where whole tasks leave the runs out of
// balance, the tasks' keys are split between threads. One stream's step on 2 threads: -1 % at
// 256 keys, -4 % at 2,000; at 128 keys or fewer within +-0.2 % (the attention is mostly a fixed
// cost there), so those steps keep whole tasks (BENCHMARKS.md, session 33).
constexpr int64_t kSplitMinKeys = 256;

}  // namespace roseinfer::attention
