#include <omp.h>
#include <chrono>
#include <cstdio>
#include <vector>
int main() {
  const int N = 200000;
  volatile int sink = 0;
  for (int rep = 0; rep < 3; ++rep) {
    auto t = std::chrono::steady_clock::now();
    for (int i = 0; i < N; ++i) {
#pragma omp parallel num_threads(2)
      { sink += omp_get_thread_num(); }
    }
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count() / N;
    // with 5 us of serial work between regions (the worker spins meanwhile)
    t = std::chrono::steady_clock::now();
    for (int i = 0; i < N / 10; ++i) {
      auto w = std::chrono::steady_clock::now();
      while (std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - w).count() < 5) {}
#pragma omp parallel num_threads(2)
      { sink += omp_get_thread_num(); }
    }
    double us2 = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count() / (N / 10) - 5;
    std::printf("empty region back to back: %.3f us; after 5 us serial: %.3f us\n", us, us2);
  }
}
