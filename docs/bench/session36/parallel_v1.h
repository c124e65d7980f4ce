// The kernels' parallel loops. `parallel_for` keeps at::parallel_for's contract (chunks of at
// least `grain` iterations, at most one part per thread); inside `in_one_region(body)` it hands
// the chunks to threads that wait in one OpenMP region, spinning on a flag, instead of forking a
// region per loop. A one-row decode step runs ~150 loops: a fork and join costs 1.1-1.6 µs here,
// handing work to a waiting thread ~0.4 µs (BENCHMARKS.md, session 30). In the region each
// thread's share is cut into pieces that a thread done with its own share may take: on a host
// whose every CPU runs a thread of the region, another process or the server's HTTP thread takes
// one CPU from time to time, and with fixed shares both threads then waited for the one without
// a CPU (BENCHMARKS.md, session 36). Every caller's loop body must therefore give the same result
// whichever thread runs which of its chunks (outputs written per index, scratch per thread).
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
// them. A job is a piece function over `parts` shares of `pieces` pieces each; thread p takes the
// pieces of share p in order, then those left in the other shares. `go` counts jobs; each waiting
// thread counts those it finished, and each share its next piece, in its own cache line.
class WaitingTeam {
 public:
  // Thread 0, first in the region: the region's thread count, before any job.
  void start(int threads) {
    size_ = threads;
    done_.reset(new Finished[threads]);
    next_.reset(new NextPiece[threads]);
  }
  int size() const { return size_; }
  bool busy() const { return busy_; }

  // piece(p, i) for every share p in [0, parts), parts <= size(), and piece i in [0, pieces),
  // each exactly once, on thread 0 and threads 1..parts-1; returns when all are done,
  // rethrowing the first exception any of them raised (a thread stops taking pieces at its
  // first).
  template <class F>
  void run(int parts, int64_t pieces, const F& piece) {
    job_ = &piece;
    call_ = [](const void* job, int part, int64_t i) {
      (*static_cast<const F*>(job))(part, i);
    };
    parts_ = parts;
    pieces_ = pieces;
    busy_ = true;
    const uint64_t job = go_.load(std::memory_order_relaxed) + 1;
    go_.store(job, std::memory_order_release);
    std::exception_ptr error;
    try {
      at::internal::ThreadIdGuard tid(0);
      c10::ParallelGuard guard(true);
      take_pieces(0, job);
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

  // Thread `tid` (>= 1): take pieces of each job it has a share in, and say it is done with the
  // job either way, until `release`.
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
          take_pieces(tid, job);
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
  // A share's next piece, tagged with its job: (job << kPieceBits) | piece. A share no thread
  // has touched in this job still holds an older job's tag and so starts at piece 0, without
  // thread 0 resetting every share's line before each job.
  struct alignas(64) NextPiece {
    std::atomic<uint64_t> tagged{0};
  };
  static constexpr int kPieceBits = 24;

  // The next untaken piece of share `part` in `job`, or -1 when none is left.
  int64_t claim(int part, uint64_t job) {
    std::atomic<uint64_t>& next = next_[part].tagged;
    const uint64_t tag = job << kPieceBits;
    uint64_t seen = next.load(std::memory_order_relaxed);
    for (;;) {
      const int64_t i = (seen >> kPieceBits) == (tag >> kPieceBits)
                            ? static_cast<int64_t>(seen & ((uint64_t{1} << kPieceBits) - 1))
                            : 0;
      if (i >= pieces_) return -1;
      if (next.compare_exchange_weak(seen, tag | static_cast<uint64_t>(i + 1),
                                     std::memory_order_relaxed))
        return i;
    }
  }

  // Thread `tid`'s own share first, then whatever the other shares have left, from the next
  // thread's on.
  void take_pieces(int tid, uint64_t job) {
    for (int k = 0; k < parts_; ++k) {
      const int part = (tid + k) % parts_;
      for (int64_t i; (i = claim(part, job)) >= 0;) call_(job_, part, i);
    }
  }

  int size_ = 1;
  alignas(64) std::atomic<uint64_t> go_{0};
  const void* job_ = nullptr;
  void (*call_)(const void*, int, int64_t) = nullptr;
  int parts_ = 0;
  int64_t pieces_ = 0;
  bool busy_ = false;  // a job runs: a loop nested in it runs in place
  bool released_ = false;
  std::unique_ptr<Finished[]> done_;
  std::unique_ptr<NextPiece[]> next_;
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
// more than `grain` iterations, in shares of ceil(range / parts) for parts = min(threads,
// ceil(range / grain)). In one region each share runs as up to kPiecesPerShare chunks of at
// least `grain` iterations, in order on its own thread unless another takes some.
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
  constexpr int64_t kPiecesPerShare = 8;
  const int64_t parts =
      grain > 0 ? std::min<int64_t>(team->size(), (range + grain - 1) / grain) : team->size();
  const int64_t share = (range + parts - 1) / parts;
  const int64_t piece =
      std::max<int64_t>({grain, 1, (share + kPiecesPerShare - 1) / kPiecesPerShare});
  team->run(static_cast<int>(parts), (share + piece - 1) / piece, [&](int part, int64_t i) {
    const int64_t share_begin = begin + part * share;
    const int64_t share_end = std::min(end, share_begin + share);
    const int64_t b = share_begin + i * piece;
    if (b < share_end) f(b, std::min(share_end, b + piece));
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
