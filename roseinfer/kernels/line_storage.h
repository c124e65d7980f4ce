// Storage that starts on a 64-byte cache line, for scratch that AMX tiles and 512-bit vectors
// read and write a row at a time: a 64-byte row that straddles two lines costs two of L1's
// accesses. std::vector's and new[]'s 16-byte alignment left the prefill attention's rows all
// straddling; on 64-byte lines its tile products took ~1.4x less time (BENCHMARKS.md, session
// 67).
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace roseinfer {

constexpr std::size_t kCacheLine = 64;

template <typename T>
struct LineAllocator {
  using value_type = T;
  LineAllocator() = default;
  template <typename U>
  LineAllocator(const LineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kCacheLine}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{kCacheLine}); }
  template <typename U>
  bool operator==(const LineAllocator<U>&) const { return true; }
};

template <typename T>
using LineVector = std::vector<T, LineAllocator<T>>;

struct LineFree {
  void operator()(void* p) const { ::operator delete(p, std::align_val_t{kCacheLine}); }
};

// n elements of a trivial type, left unset (a fresh buffer that is written before it is read).
template <typename T>
using LineArray = std::unique_ptr<T[], LineFree>;

template <typename T>
LineArray<T> line_array(std::size_t n) {
  static_assert(std::is_trivially_default_constructible_v<T>);
  return LineArray<T>(static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kCacheLine})));
}

}  // namespace roseinfer
