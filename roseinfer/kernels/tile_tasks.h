// The weight packing of the linear kernels that split a layer into tasks of 16-output tiles
// (`vnni_int8_linear`, `dpbf16_linear` and their gated entries): each task's tiles interleaved
// load by load, so that each thread's run of tasks is one sequential stream (three streams a tile
// apart were 7-19 % slower at 1-32 rows; BENCHMARKS.md, session 27).
#pragma once

#include "aten.h"

#include <vector>

namespace roseinfer {

// w [N, K] (N % 16 == 0, K % group == 0) as tiles of 16 outputs holding `group` inputs each per
// 64-byte load, a task's `task_tiles` tiles (the last task's: what is left) interleaved one
// load at a time, [K/group][tiles][16][group], tasks in order. Returned as [N/16, K/group, 16,
// group], the shape of the tiles it holds.
inline at::Tensor pack_tile_tasks(const at::Tensor& w, int64_t group, int64_t task_tiles) {
  const int64_t N = w.size(0), K = w.size(1);
  const int64_t task_rows = 16 * task_tiles, full = N / task_rows * task_rows;
  auto interleave = [&](int64_t start, int64_t rows, int64_t per_task) {
    return w.narrow(0, start, rows)
        .reshape({rows / per_task, per_task / 16, 16, K / group, group})
        .permute({0, 3, 1, 2, 4})
        .reshape({-1});
  };
  std::vector<at::Tensor> parts;
  if (full > 0) parts.push_back(interleave(0, full, task_rows));
  if (full < N) parts.push_back(interleave(full, N - full, N - full));  // the last, short task
  return at::cat(parts).view({N / 16, K / group, 16, group});
}

// A gated projection's w [2I, K] = [gate; up] (I % 16 == 0) packed as tasks of two tiles, gate
// outputs 16j.. and up outputs I + 16j.. (task j), so that one task's epilogue has both halves of
// SiLU·mul's inputs: the kernels' gated entries (`vnni_int8_gated_linear`,
// `dpbf16_gated_linear`) read this layout, in the shape `pack_tile_tasks` gives.
inline at::Tensor pack_gated_tile_tasks(const at::Tensor& w, int64_t group) {
  const int64_t N = w.size(0), K = w.size(1);
  TORCH_CHECK(N % 32 == 0, "a gated projection needs [2I, K] with I % 16 == 0, got [", N, ", ", K, "]");
  // [2, I/16, 16, K] -> [I/16, 2, 16, K]: gate tile j, then up tile j.
  return pack_tile_tasks(w.view({2, N / 32, 16, K}).transpose(0, 1).reshape({N, K}), group, 2);
}

}  // namespace roseinfer
