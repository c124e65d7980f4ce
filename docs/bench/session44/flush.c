#include <immintrin.h>
#include <stddef.h>
void flush(const char* p, size_t n) {
  for (size_t i = 0; i < n; i += 64) _mm_clflushopt((void*)(p + i));
  _mm_sfence();
}
