// The kernels' parallel loops. `parallel_for` keeps at::parallel_for's contract (chunks of at
// least `grain` iterations, at most one part per thread); inside `in_one_region(body)` it hands
// the chunks to threads that wait in one OpenMP region, spinning on a flag, instead of forking a
// region per loop. A one-row decode step runs ~150 loops: a fork and join costs 1.1-1.6 µs here,
// handing work to a waiting thread ~0.4 µs (BENCHMARKS.md, session 30). In the region a thread
// done with its own share may take what another's has left: on a host whose every CPU runs a
// thread of the region, another process or the server's HTTP thread takes one CPU from time to
// time, and with fixed shares both threads then waited for the one without a CPU (BENCHMARKS.md,
// session 36). Every caller's loop body must therefore give the same result whichever thread
// runs which of its chunks (outputs written per index, scratch per thread).
#pragma once

#include <ATen/Parallel.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <type_traits>

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
// them. A job is a piece function over `parts` shares of `pieces` pieces each: thread p takes the
// pieces of share p from the front, then those left in the other shares from the back, so that
// a thread without its CPU holds up a job by one piece at most, and the job after it not at all.
// A job ends when its every piece is done, not when every thread has seen it: a thread comes
// back to the newest job. `seq` publishes a job's fields (odd while thread 0 writes them); each
// thread counts the pieces it finished, and each share those taken, in their own cache lines.
class WaitingTeam {
 public:
  // Thread 0, first in the region: the region's thread count and how many pieces a loop's share
  // is cut into, before any job.
  void start(int threads, int64_t pieces_per_share) {
    size_ = threads;
    pieces_per_share_ = pieces_per_share;
    finished_.reset(new Counter[threads]);
    taken_.reset(new Counter[threads]);
  }
  int size() const { return size_; }
  int64_t pieces_per_share() const { return pieces_per_share_; }
  bool busy() const { return busy_; }

  // piece(p, i) for every share p in [0, parts), parts <= size(), and piece i in [0, pieces <
  // 256), each exactly once, on thread 0 and threads 1..parts-1; returns when all are done,
  // rethrowing the first exception any of them raised.
  template <class F>
  void run(int parts, int64_t pieces, const F& piece) {
    busy_ = true;  // before the job is published: a loop in one of its pieces runs in place
    const uint64_t seq = seq_.load(std::memory_order_relaxed);
    seq_.store(seq + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    const Job job{&piece,
                  [](const void* f, int part, int64_t i) {
                    (*static_cast<const F*>(f))(part, i);
                  },
                  parts, pieces, (seq + 2) / 2};
    publish(job);
    seq_.store(seq + 2, std::memory_order_release);
    posted_ += parts * pieces;
    at::internal::ThreadIdGuard tid(0);
    c10::ParallelGuard guard(true);
    finished_here_ += take_pieces(0, job, true);
    const auto late = std::chrono::steady_clock::now() + kLate;
    for (bool taken = false;;) {
      int64_t finished = finished_here_;
      for (int t = 1; t < size_; ++t)
        finished += finished_[t].count.load(std::memory_order_acquire);
      if (finished == posted_) break;
      if (!taken && std::chrono::steady_clock::now() > late) {
        finished_here_ += take_pieces(0, job, false);
        taken = true;
      }
      spin_pause();
    }
    busy_ = false;
    // Every piece is done: no thread writes error_ until the next job.
    if (error_) {
      std::exception_ptr error;
      std::swap(error, error_);
      std::rethrow_exception(error);
    }
  }

  // Thread `tid` (>= 1): take pieces of the newest job while it has any, until `release`.
  void wait_for_jobs(int tid) {
    uint64_t seen = 0;
    int64_t finished = 0;
    for (;;) {
      uint64_t seq;
      while ((seq = seq_.load(std::memory_order_acquire)) == seen || seq % 2 == 1) spin_pause();
      if (released_.load(std::memory_order_acquire)) return;
      const Job job = published(seq);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (seq_.load(std::memory_order_relaxed) != seq) continue;  // rewritten as we read it
      seen = seq;
      if (tid >= job.parts) continue;
      at::internal::ThreadIdGuard tid_guard(tid);
      c10::ParallelGuard guard(true);
      finished += take_pieces(tid, job, true);
      finished_[tid].count.store(finished, std::memory_order_release);
      // The others' shares, if the job is still on once they are late.
      const auto late = std::chrono::steady_clock::now() + kLate;
      while (seq_.load(std::memory_order_relaxed) == seq &&
             std::chrono::steady_clock::now() <= late)
        spin_pause();
      if (seq_.load(std::memory_order_relaxed) != seq) continue;
      finished += take_pieces(tid, job, false);
      finished_[tid].count.store(finished, std::memory_order_release);
    }
  }

  void release() {
    released_.store(true, std::memory_order_relaxed);
    seq_.store(seq_.load(std::memory_order_relaxed) + 2, std::memory_order_release);
  }

 private:
  struct Job {
    const void* piece;
    void (*call)(const void*, int, int64_t);
    int parts;
    int64_t pieces;
    uint64_t number;  // seq / 2 once published: the tag of its shares' counts
  };
  // How long a thread done with its share waits for the others before it takes from theirs:
  // longer than threads that have their CPUs lag, shorter than another process's turn on a CPU
  // (~0.1 ms). Taking sooner made a one-row step 2-4 % slower: the shares' counts went back and
  // forth between the cores at every loop (BENCHMARKS.md, session 36).
  static constexpr std::chrono::microseconds kLate{5};
  struct alignas(64) Counter {
    std::atomic<uint64_t> count{0};
  };

  // The job's fields as atomics: a thread may read them while thread 0 writes the next job's
  // (it then sees `seq` move and reads again).
  void publish(const Job& job) {
    piece_.store(job.piece, std::memory_order_relaxed);
    call_.store(job.call, std::memory_order_relaxed);
    parts_.store(job.parts, std::memory_order_relaxed);
    pieces_.store(job.pieces, std::memory_order_relaxed);
  }
  Job published(uint64_t seq) const {
    return {piece_.load(std::memory_order_relaxed), call_.load(std::memory_order_relaxed),
            parts_.load(std::memory_order_relaxed), pieces_.load(std::memory_order_relaxed),
            seq / 2};
  }

  // A share's count of pieces taken: (job number << 16) | (from the front << 8) | from the back.
  // A share no thread has touched in this job still holds an older job's number, so all its
  // pieces are left (thread 0 need not reset every share's line before each job); a newer
  // number means the job has ended. The piece this thread takes (its own share's next, or
  // another's last), or -1 when none is left.
  static int64_t take(std::atomic<uint64_t>& taken, const Job& job, bool own) {
    uint64_t seen = taken.load(std::memory_order_relaxed);
    for (;;) {
      const uint64_t number = seen >> 16;
      if (number > job.number) return -1;
      const uint64_t counts = number == job.number ? seen & 0xFFFF : 0;
      const int64_t front = static_cast<int64_t>(counts >> 8), back = counts & 0xFF;
      if (front + back >= job.pieces) return -1;
      const uint64_t next = (job.number << 16) | (own ? counts + 0x100 : counts + 1);
      if (taken.compare_exchange_weak(seen, next, std::memory_order_relaxed))
        return own ? front : job.pieces - 1 - back;
    }
  }

  // Thread `tid`'s own share, or what the other shares have left, from the next thread's on: the
  // number of pieces it finished (a piece that throws counts, its exception kept for thread 0 if
  // it is the first).
  int64_t take_pieces(int tid, const Job& job, bool own) {
    int64_t finished = 0;
    for (int k = own ? 0 : 1; k < (own ? 1 : job.parts); ++k) {
      const int part = (tid + k) % job.parts;
      for (int64_t i; (i = take(taken_[part].count, job, own)) >= 0; ++finished) {
        try {
          job.call(job.piece, part, i);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex_);
          if (!error_) error_ = std::current_exception();
        }
      }
    }
    return finished;
  }

  int size_ = 1;
  int64_t pieces_per_share_ = 1;
  alignas(64) std::atomic<uint64_t> seq_{0};  // 2 * the jobs published; odd while writing one
  std::atomic<const void*> piece_{nullptr};
  std::atomic<void (*)(const void*, int, int64_t)> call_{nullptr};
  std::atomic<int> parts_{0};
  std::atomic<int64_t> pieces_{0};
  std::atomic<bool> released_{false};
  // Written by thread 0 alone.
  alignas(64) bool busy_ = false;  // a job runs: a loop nested in it runs in place
  int64_t posted_ = 0;             // the pieces of every job so far
  int64_t finished_here_ = 0;      // those thread 0 finished
  std::unique_ptr<Counter[]> finished_;  // thread t's finished pieces, every job so far
  std::unique_ptr<Counter[]> taken_;     // share p's taken pieces in its latest job
  std::mutex error_mutex_;
  std::exception_ptr error_;
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

// f(chunk, chunk_end) or, where f takes a third argument, f(chunk, chunk_end, share_end): the
// end of the thread's share, whose later chunks the thread runs next (unless another takes
// them), so that f can ask for their data ahead.
template <class F>
void call_chunk(const F& f, int64_t b, int64_t e, int64_t share_end) {
  if constexpr (std::is_invocable_v<const F&, int64_t, int64_t, int64_t>)
    f(b, e, share_end);
  else
    f(b, e);
}

// f(chunk_begin, chunk_end[, share_end]) over [begin, end), as at::parallel_for: in parallel
// when there are more than `grain` iterations, in shares of ceil(range / parts) for parts =
// min(threads, ceil(range / grain)). In one region each share runs as up to the region's
// pieces_per_share chunks of at least `grain` iterations, in order on its own thread unless
// another takes some.
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  WaitingTeam* team = current_team();
  if (team == nullptr) {
    at::parallel_for(begin, end, grain, [&](int64_t b, int64_t e) { call_chunk(f, b, e, e); });
    return;
  }
  const int64_t range = end - begin;
  if (range <= 0) return;
  if (range <= grain || range == 1 || team->size() < 2 || team->busy()) {
    c10::ParallelGuard guard(true);
    call_chunk(f, begin, end, end);
    return;
  }
  const int64_t parts =
      grain > 0 ? std::min<int64_t>(team->size(), (range + grain - 1) / grain) : team->size();
  const int64_t share = (range + parts - 1) / parts;
  const int64_t piece =
      std::max<int64_t>({grain, 1, (share + team->pieces_per_share() - 1) / team->pieces_per_share()});
  team->run(static_cast<int>(parts), (share + piece - 1) / piece, [&](int part, int64_t i) {
    const int64_t share_begin = begin + part * share;
    const int64_t share_end = std::min(end, share_begin + share);
    const int64_t b = share_begin + i * piece;
    if (b < share_end) call_chunk(f, b, std::min(share_end, b + piece), share_end);
  });
}

// body() on this thread with the others of one OpenMP region waiting for its parallel_for
// loops; where there is one thread, more threads than usable CPUs (a thread that spins would
// take the CPU of one with work), or a region already, body() alone with a fork per loop. Loops
// of code that is not ours (aten, oneDNN, MKL) run on this thread only in there: callers keep
// them out. Each thread's share of a loop runs as up to `pieces_per_share` pieces the others may
// take: more pay where loops are long next to a CPU taken from a thread (~0.1 ms), and cost
// ~1 % where they are not.
template <class F>
void in_one_region(const F& body, int64_t pieces_per_share = 1) {
  TORCH_CHECK(pieces_per_share >= 1 && pieces_per_share < 256,
              "in_one_region: pieces_per_share must lie in [1, 256)");
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
      team.start(omp_get_num_threads(), pieces_per_share);
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
