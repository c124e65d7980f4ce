#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <immintrin.h>
#include <pthread.h>
alignas(64) std::atomic<long> go{0};
alignas(64) std::atomic<long> done{0};
int main() {
  const long N = 500000;
  std::thread w([] {
    cpu_set_t s; CPU_ZERO(&s); CPU_SET(1, &s); pthread_setaffinity_np(pthread_self(), sizeof s, &s);
    for (long i = 1; i <= N; ++i) {
      while (go.load(std::memory_order_acquire) < i) _mm_pause();
      done.store(i, std::memory_order_release);
    }
  });
  cpu_set_t s; CPU_ZERO(&s); CPU_SET(0, &s); pthread_setaffinity_np(pthread_self(), sizeof s, &s);
  auto t = std::chrono::steady_clock::now();
  for (long i = 1; i <= N; ++i) {
    go.store(i, std::memory_order_release);
    while (done.load(std::memory_order_acquire) < i) _mm_pause();
  }
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count() / N;
  w.join();
  std::printf("round trip (dispatch + join) %.3f us\n", us);
}
