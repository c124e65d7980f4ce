// Fused elementwise ops of a decoder layer, each one call instead of 3-16 PyTorch ops.
// Rounding follows the unfused PyTorch code (and transformers): intermediate results are
// rounded to the storage dtype where that code rounds them, so bf16 outputs match it closely.
#include <ATen/Parallel.h>

#include <type_traits>

#include "ops.h"
#include "parallel.h"
#include "rotary.h"
#include "vec.h"

namespace roseinfer {
namespace {

template <typename T>
inline T round_to(float x) { return static_cast<T>(x); }

// y = T(T(x * inv_rms) * w) for one row of n elements.
template <typename T>
void norm_row(const T* x, const T* w, T* y, int64_t n, float eps) {
  float ss = 0.f;
  int64_t i = 0;
#if defined(__AVX512F__)
  __m512 acc = _mm512_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    const __m512 v = load16(x + i);
    acc = _mm512_fmadd_ps(v, v, acc);
  }
  ss = _mm512_reduce_add_ps(acc);
#elif defined(ROSEINFER_VECF)  // AVX2 + FMA + F16C: the same in 8 lanes
  __m256 acc = _mm256_setzero_ps();
  for (; i + 8 <= n; i += 8) {
    const __m256 v = vec_load(x + i);
    acc = _mm256_fmadd_ps(v, v, acc);
  }
  ss = vec_sum(acc);
#endif
  for (; i < n; ++i) ss += to_float(x[i]) * to_float(x[i]);
  const float inv = 1.f / std::sqrt(ss / static_cast<float>(n) + eps);
  i = 0;
#if defined(__AVX512F__)
  const __m512 invv = _mm512_set1_ps(inv);
  for (; i + 16 <= n; i += 16) {
    const __m512 normed = round16<T>(_mm512_mul_ps(load16(x + i), invv));
    store16(y + i, _mm512_mul_ps(normed, load16(w + i)));
  }
#elif defined(ROSEINFER_VECF)
  const __m256 invv = _mm256_set1_ps(inv);
  for (; i + 8 <= n; i += 8) {
    const __m256 normed = round8<T>(_mm256_mul_ps(vec_load(x + i), invv));
    store8(y + i, _mm256_mul_ps(normed, vec_load(w + i)));
  }
#endif
  for (; i < n; ++i) y[i] = round_to<T>(to_float(round_to<T>(to_float(x[i]) * inv)) * to_float(w[i]));
}

// r = T(r + x) in place.
template <typename T>
void add_row(T* r, const T* x, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) store16(r + i, _mm512_add_ps(load16(r + i), load16(x + i)));
#elif defined(ROSEINFER_VECF)
  for (; i + 8 <= n; i += 8) store8(r + i, _mm256_add_ps(vec_load(r + i), vec_load(x + i)));
#endif
  for (; i < n; ++i) r[i] = round_to<T>(to_float(r[i]) + to_float(x[i]));
}

template <typename F>
void for_rows(int64_t rows, int64_t row_elems, const F& f) {
  // Split only when there is enough work per thread to pay for the fork.
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, row_elems));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) f(r);
  });
}

void check_rows(const at::Tensor& x, const char* name) {
  TORCH_CHECK(x.dim() == 2 && x.stride(1) == 1, name, " must be [rows, n] with contiguous rows");
}

}  // namespace

// x [rows, n], or [rows, heads, n] (per-head norms, e.g. Qwen3's q/k norms on strided views
// into the fused qkv output): the norm of each n-vector, into a new contiguous tensor (or `out`).
at::Tensor rms_norm(at::Tensor x, at::Tensor weight, double eps,
                       c10::optional<at::Tensor> out) {
  TORCH_CHECK((x.dim() == 2 || x.dim() == 3) && x.stride(-1) == 1,
              "rms_norm: x must be [rows, n] or [rows, heads, n] with contiguous rows");
  const int64_t n = x.size(-1);
  TORCH_CHECK(weight.is_contiguous() && weight.numel() == n &&
                  weight.scalar_type() == x.scalar_type(),
              "rms_norm: weight must be [n] in x's dtype");
  const int64_t heads = x.dim() == 3 ? x.size(1) : 1;
  const int64_t head_stride = x.dim() == 3 ? x.stride(1) : 0;
  auto y = output_tensor(out, x.sizes(), x.options(), x, "rms_norm");
  dispatch(x.scalar_type(), "rms_norm", [&](auto tag) {
    using T = decltype(tag);
    const int64_t stride = x.stride(0);
    const T* xp = x.data_ptr<T>();
    const T* wp = weight.data_ptr<T>();
    T* op = y.data_ptr<T>();
    for_rows(x.size(0) * heads, n, [&](int64_t r) {
      norm_row<T>(xp + r / heads * stride + r % heads * head_stride, wp, op + r * n, n,
                  static_cast<float>(eps));
    });
  });
  return y;
}

// residual += x (in place), then the norm of the new residual.
at::Tensor add_rms_norm(at::Tensor x, at::Tensor residual, at::Tensor weight,
                           double eps, c10::optional<at::Tensor> out) {
  check_rows(x, "add_rms_norm: x");
  TORCH_CHECK(residual.is_contiguous() && residual.sizes() == x.sizes() &&
                  residual.scalar_type() == x.scalar_type(),
              "add_rms_norm: residual must be a contiguous tensor shaped like x");
  TORCH_CHECK(weight.is_contiguous() && weight.numel() == x.size(1) &&
                  weight.scalar_type() == x.scalar_type(),
              "add_rms_norm: weight must be [n] in x's dtype");
  auto y = output_tensor(out, {x.size(0), x.size(1)}, x.options(), x, "add_rms_norm");
  TORCH_CHECK(y.data_ptr() != residual.data_ptr(), "add_rms_norm: out must not be the residual");
  dispatch(x.scalar_type(), "add_rms_norm", [&](auto tag) {
    using T = decltype(tag);
    const int64_t n = x.size(1), stride = x.stride(0);
    const T* xp = x.data_ptr<T>();
    const T* wp = weight.data_ptr<T>();
    T* rp = residual.data_ptr<T>();
    T* op = y.data_ptr<T>();
    for_rows(x.size(0), n, [&](int64_t r) {
      T* res = rp + r * n;
      add_row<T>(res, xp + r * stride, n);
      norm_row<T>(res, wp, op + r * n, n, static_cast<float>(eps));
    });
  });
  return y;
}

// Rotate-half rotary embedding in place on q [N, H, D] and k [N, KVH, D] (rows may be strided
// views into the fused qkv output); cos, sin [N, D/2] in the same dtype.
void rotary_embedding(at::Tensor q, at::Tensor k, at::Tensor cos, at::Tensor sin) {
  TORCH_CHECK(q.dim() == 3 && k.dim() == 3 && q.stride(2) == 1 && k.stride(2) == 1,
              "rotary_embedding: q and k must be [N, heads, D] with contiguous D");
  TORCH_CHECK(cos.is_contiguous() && sin.is_contiguous() && cos.size(0) == q.size(0) &&
                  cos.size(1) * 2 == q.size(2),
              "rotary_embedding: cos and sin must be contiguous [N, D/2]");
  TORCH_CHECK(q.scalar_type() == k.scalar_type() && cos.scalar_type() == q.scalar_type() &&
                  sin.scalar_type() == q.scalar_type(),
              "rotary_embedding: q, k, cos, sin must share a dtype");
  dispatch(q.scalar_type(), "rotary_embedding", [&](auto tag) {
    using T = decltype(tag);
    const int64_t half = q.size(2) / 2;
    // Pointers and strides read once, outside the per-row loop.
    T* qp = q.data_ptr<T>();
    T* kp = k.data_ptr<T>();
    const T* cp = cos.data_ptr<T>();
    const T* sp = sin.data_ptr<T>();
    const int64_t q_heads = q.size(1), k_heads = k.size(1);
    const int64_t q_row = q.stride(0), q_head = q.stride(1);
    const int64_t k_row = k.stride(0), k_head = k.stride(1);
    for_rows(q.size(0), (q_heads + k_heads) * q.size(2), [&](int64_t r) {
      const T* c = cp + r * half;
      const T* s = sp + r * half;
      for (int64_t h = 0; h < q_heads; ++h) {
        T* x = qp + r * q_row + h * q_head;
        rotate_half(x, x, c, s, half);
      }
      for (int64_t h = 0; h < k_heads; ++h) {
        T* x = kp + r * k_row + h * k_head;
        rotate_half(x, x, c, s, half);
      }
    });
  });
}

// x [N, 2I] = [gate | up] -> T(T(silu(gate)) * up) [N, I].
at::Tensor silu_and_mul(at::Tensor x, c10::optional<at::Tensor> out) {
  check_rows(x, "silu_and_mul: x");
  TORCH_CHECK(x.size(1) % 2 == 0, "silu_and_mul: x must have an even last dim");
  const int64_t inter = x.size(1) / 2;
  auto y = output_tensor(out, {x.size(0), inter}, x.options(), x, "silu_and_mul");
  dispatch(x.scalar_type(), "silu_and_mul", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data_ptr<T>();
    T* op = y.data_ptr<T>();
    const int64_t stride = x.stride(0);
    for_rows(x.size(0), x.size(1), [&](int64_t r) {
      const T* gate = xp + r * stride;
      const T* up = gate + inter;
      T* y = op + r * inter;
      int64_t i = 0;
#if defined(__AVX512F__)
      for (; i + 16 <= inter; i += 16) store16(y + i, silu_mul16<T>(load16(gate + i), load16(up + i)));
#elif defined(ROSEINFER_VECF)  // AVX2 + FMA + F16C
      const __m256 one = _mm256_set1_ps(1.f);
      for (; i + 8 <= inter; i += 8) {
        const __m256 g = vec_load(gate + i);
        const __m256 sg = _mm256_div_ps(g, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), g))));
        store8(y + i, _mm256_mul_ps(round8<T>(sg), vec_load(up + i)));
      }
#endif
      for (; i < inter; ++i) {
        const float g = to_float(gate[i]);
        const T sg = round_to<T>(g / (1.f + std::exp(-g)));
        y[i] = round_to<T>(to_float(sg) * to_float(up[i]));
      }
    });
  });
  return y;
}

}  // namespace roseinfer
