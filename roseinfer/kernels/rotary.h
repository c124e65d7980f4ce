// Rotate-half rotary embedding of one head's row: `rotary_embedding` (in place on q and k) and
// the decode kernel (on the way from the fused qkv projection into the cache and the scores)
// share it, so both round alike.
#pragma once

#include "vec.h"

namespace roseinfer {

// y = (x1 cos - x2 sin, x2 cos + x1 sin) for x = (x1, x2) of 2 * half elements, cos and sin
// [half]; each product rounded to T, as the unfused PyTorch code (and transformers) rounds it.
// y may be x.
template <typename T>
inline void rotate_half(const T* x, T* y, const T* c, const T* s, int64_t half) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= half; i += 16) {
    const __m512 x1 = load16(x + i), x2 = load16(x + half + i);
    const __m512 cv = load16(c + i), sv = load16(s + i);
    const __m512 x1c = round16<T>(_mm512_mul_ps(x1, cv)), x2s = round16<T>(_mm512_mul_ps(x2, sv));
    const __m512 x2c = round16<T>(_mm512_mul_ps(x2, cv)), x1s = round16<T>(_mm512_mul_ps(x1, sv));
    store16(y + i, _mm512_sub_ps(x1c, x2s));
    store16(y + half + i, _mm512_add_ps(x2c, x1s));
  }
#elif defined(ROSEINFER_VECF)  // AVX2 + FMA + F16C: the same in 8 lanes
  for (; i + 8 <= half; i += 8) {
    const __m256 x1 = vec_load(x + i), x2 = vec_load(x + half + i);
    const __m256 cv = vec_load(c + i), sv = vec_load(s + i);
    const __m256 x1c = round8<T>(_mm256_mul_ps(x1, cv)), x2s = round8<T>(_mm256_mul_ps(x2, sv));
    const __m256 x2c = round8<T>(_mm256_mul_ps(x2, cv)), x1s = round8<T>(_mm256_mul_ps(x1, sv));
    store8(y + i, _mm256_sub_ps(x1c, x2s));
    store8(y + half + i, _mm256_add_ps(x2c, x1s));
  }
#endif
  auto r = [](float v) { return to_float(static_cast<T>(v)); };
  for (; i < half; ++i) {
    const float x1 = to_float(x[i]), x2 = to_float(x[half + i]);
    const float cv = to_float(c[i]), sv = to_float(s[i]);
    y[i] = static_cast<T>(r(x1 * cv) - r(x2 * sv));
    y[half + i] = static_cast<T>(r(x2 * cv) + r(x1 * sv));
  }
}

}  // namespace roseinfer
