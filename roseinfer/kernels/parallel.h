// The kernels' parallel loops. `parallel_for` keeps at::parallel_for's contract (the same chunks
// to the same thread numbers); inside `in_one_region(body)` it hands the chunks to threads that
// wait in one OpenMP region, spinning on a flag, instead of forking a region per loop. A one-row
// decode step runs ~150 loops: a fork and join costs 1.1-1.6 µs here, handing work to a waiting
// thread ~0.4 µs (BENCHMARKS.md, session 30).
#pragma once

#include <ATen/Parallel.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

namespace roseinfer {

inline void spin_pause() {
#if defined(__x86_64__) || defined(_M_X64)
  _mm_pause();
#endif
}

// Thread 0 of one OpenMP region runs the body and hands loops to the others, which wait for
// them. A job is the chunk function and its part count; `go` counts jobs, each waiting thread
// counts those it finished in its own cache line, so neither side needs a locked instruction.
class WaitingTeam {
 public:
  // Thread 0, first in the region: the region's thread count, before any job.
  void start(int threads) {
    size_ = threads;
    done_.reset(new Finished[threads]);
  }
  int size() const { return size_; }
  bool busy() const { return busy_; }

  // chunk(p) for p in [0, parts), parts <= size(): 0 here, the others on threads 1..parts-1;
  // returns when all are done, rethrowing the first exception any of them raised.
  template <class F>
  void run(int parts, const F& chunk) {
    job_ = &chunk;
    call_ = [](const void* job, int part) { (*static_cast<const F*>(job))(part); };
    parts_ = parts;
    busy_ = true;
    const uint64_t job = go_.load(std::memory_order_relaxed) + 1;
    go_.store(job, std::memory_order_release);
    std::exception_ptr error;
    try {
      at::internal::ThreadIdGuard tid(0);
      c10::ParallelGuard guard(true);
      chunk(0);
    } catch (...) {
      error = std::current_exception();
    }
    // Every waiting thread, not only the job's: one that read this job's fields must be done
    // reading them before the next job writes them.
    for (int t = 1; t < size_; ++t)
      while (done_[t].jobs.load(std::memory_order_acquire) != job) spin_pause();
    busy_ = false;
    if (!error) std::swap(error, worker_error_);
    worker_error_ = nullptr;
    if (error) std::rethrow_exception(error);
  }

  // Thread `tid` (>= 1): run each job's chunk `tid` where it has one, and say it is done with
  // the job either way, until `release`.
  void wait_for_jobs(int tid) {
    uint64_t seen = 0;
    for (;;) {
      uint64_t job;
      while ((job = go_.load(std::memory_order_acquire)) == seen) spin_pause();
      seen = job;
      if (released_) return;
      if (tid < parts_) {
        try {
          at::internal::ThreadIdGuard tid_guard(tid);
          c10::ParallelGuard guard(true);
          call_(job_, tid);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex_);
          if (!worker_error_) worker_error_ = std::current_exception();
        }
      }
      done_[tid].jobs.store(job, std::memory_order_release);
    }
  }

  void release() {
    released_ = true;
    go_.store(go_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

 private:
  struct alignas(64) Finished {
    std::atomic<uint64_t> jobs{0};
  };
  int size_ = 1;
  alignas(64) std::atomic<uint64_t> go_{0};
  const void* job_ = nullptr;
  void (*call_)(const void*, int) = nullptr;
  int parts_ = 0;
  bool busy_ = false;  // a job runs: a loop nested in it runs in place
  bool released_ = false;
  std::unique_ptr<Finished[]> done_;
  std::mutex error_mutex_;
  std::exception_ptr worker_error_;
};

// The CPUs this process may run on (its affinity mask), or 0 where that is unknown.
inline int usable_cpus() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
#endif
  return 0;
}

inline WaitingTeam*& current_team() {
  thread_local WaitingTeam* team = nullptr;
  return team;
}

// f(chunk_begin, chunk_end) over [begin, end), as at::parallel_for: in parallel when there are
// more than `grain` iterations, in chunks of ceil(range / parts) for parts = min(threads,
// ceil(range / grain)).
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  WaitingTeam* team = current_team();
  if (team == nullptr) {
    at::parallel_for(begin, end, grain, f);
    return;
  }
  const int64_t range = end - begin;
  if (range <= 0) return;
  if (range <= grain || range == 1 || team->size() < 2 || team->busy()) {
    c10::ParallelGuard guard(true);
    f(begin, end);
    return;
  }
  const int64_t parts =
      grain > 0 ? std::min<int64_t>(team->size(), (range + grain - 1) / grain) : team->size();
  const int64_t chunk = (range + parts - 1) / parts;
  team->run(static_cast<int>(parts), [&](int part) {
    const int64_t b = begin + part * chunk;
    if (b < end) f(b, std::min(end, b + chunk));
  });
}

// body() on this thread with the others of one OpenMP region waiting for its parallel_for
// loops; where there is one thread, more threads than usable CPUs (a thread that spins would
// take the CPU of one with work), or a region already, body() alone with a fork per loop. Loops
// of code that is not ours (aten, oneDNN, MKL) run on this thread only in there: callers keep
// them out.
template <class F>
void in_one_region(const F& body) {
  const int threads = at::get_num_threads();
  if (threads < 2 || threads > usable_cpus() || omp_in_parallel()) {
    body();
    return;
  }
  WaitingTeam team;
  std::exception_ptr error;
  // No num_threads clause, as at::parallel_for, which leaves it out for a bug in GOMP's thread
  // pool (pytorch/pytorch#32008); at::get_num_threads() is the region's default size.
#pragma omp parallel
  {
    if (omp_get_thread_num() == 0) {
      team.start(omp_get_num_threads());
      current_team() = &team;
      try {
        body();
      } catch (...) {
        error = std::current_exception();
      }
      current_team() = nullptr;
      team.release();
    } else {
      team.wait_for_jobs(omp_get_thread_num());
    }
  }  // the region's closing barrier: every thread has left `team` before it goes
  if (error) std::rethrow_exception(error);
}

}  // namespace roseinfer
