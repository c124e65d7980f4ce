// What the tests and benchmarks ask of parallel.h: which thread of one region runs each index of a
// loop when one of its threads stalls in its first chunk; what handing a loop between the
// region's threads costs.
#include <ATen/Parallel.h>

#include <atomic>
#include <chrono>
#include <limits>

#include "ops.h"
#include "parallel.h"

namespace roseinfer {

at::Tensor region_loop_threads(int64_t n, int64_t grain, int64_t pieces_per_share,
                                  int64_t stalled_thread) {
  TORCH_CHECK(n > 0 && grain > 0, "region_loop_threads: needs n > 0 and grain > 0");
  TORCH_CHECK(stalled_thread >= 0 && stalled_thread < at::get_num_threads(),
              "region_loop_threads: stalled_thread must be one of the ", at::get_num_threads(),
              " threads");
  auto owners = at::full({n}, -1, at::dtype(at::kLong));
  int64_t* owner = owners.data_ptr<int64_t>();
  std::atomic<int64_t> ran{0};
  std::atomic<bool> stalled{false};
  in_one_region([&] {
    parallel_for(0, n, grain, [&](int64_t b, int64_t e) {
      const int64_t thread = at::get_thread_num();
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      auto wait_until = [&](auto&& done) {
        while (!done() && std::chrono::steady_clock::now() < deadline) spin_pause();
      };
      if (thread != stalled_thread) {
        // The others start once the stalled thread holds its chunk, so that it holds one.
        wait_until([&] { return stalled.load(); });
      } else if (!stalled.exchange(true)) {
        // As a thread whose CPU another process took: it comes back once the others have run
        // every index but this chunk's, or after 10 s.
        wait_until([&] { return ran.load() >= n - (e - b); });
      }
      for (int64_t i = b; i < e; ++i) owner[i] = thread;
      ran += e - b;
    });
  }, pieces_per_share);
  return owners;
}

double region_handoff_ns(int64_t loops) {
  TORCH_CHECK(loops > 0, "region_handoff_ns: needs loops > 0");
  double ns = std::numeric_limits<double>::quiet_NaN();
  in_one_region([&] {
    if (current_team() == nullptr) return;  // one thread, or more threads than CPUs: no region
    auto empty_loops = [&] {
      for (int64_t i = 0; i < loops; ++i) parallel_for(0, 2, 1, [](int64_t, int64_t) {});
    };
    empty_loops();  // the first loops wait for the threads to arrive
    const auto start = std::chrono::steady_clock::now();
    empty_loops();
    ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
         static_cast<double>(loops);
  });
  return ns;
}

}  // namespace roseinfer
