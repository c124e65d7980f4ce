// Rows along the vectors' lanes: kernels that transpose a few rows of activations once
// ([D][RP], the rows padded to whole vectors) and broadcast each element of the other operand
// from its own row, so that operand is read in place, row by row, never transposed. The prefill
// kernel's queries against cached keys and values, and the linears' rows of x against weight
// rows (int8_linear.cpp), share the products below.
//
// GCC's vector extensions: one register of floats, 16 lanes with AVX-512 and 8 otherwise (two
// SSE halves where the CPU has no AVX): the same source for every x86 CPU this builds on.
#pragma once

#include <cstring>

#include "vec.h"

namespace roseinfer {
namespace lanes {

#if defined(__AVX512F__)
constexpr int64_t kLanes = 16;
#else
constexpr int64_t kLanes = 8;
#endif
typedef float vfloat __attribute__((vector_size(kLanes * sizeof(float))));
typedef int32_t vint __attribute__((vector_size(kLanes * sizeof(int32_t))));

inline vfloat vload(const float* p) {
  vfloat v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void vstore(float* p, vfloat v) { std::memcpy(p, &v, sizeof(v)); }
// x in every lane, by one broadcast. (`vfloat{} + x` keeps an add: 0 + x is not x for x = -0;
// a lane-by-lane fill compiles to inserts.)
inline vfloat vsplat(float x) {
#if defined(__AVX512F__)
  return (vfloat)_mm512_set1_ps(x);
#elif defined(__AVX__)
  return (vfloat)_mm256_set1_ps(x);
#else
  return x - vfloat{};  // x - (+0) is x for every x, so this folds to the broadcast
#endif
}

// out[j][c + r] (+)= sum over d0 <= d < d1 of row[j][d] * xt[d][c + r] for NB rows j and RV
// vectors of lanes r from column c (added to out's values where `add`, else stored over them):
// each load of xt shared by the NB rows, each element of a row broadcast (RV * NB accumulators:
// as many as the register file leaves room for). d1 > d0.
template <int RV, int NB>
inline void block_products(const float* __restrict xt, int64_t RP, const float* const* row,
                           float* __restrict out, int64_t d0, int64_t d1, int64_t c, bool add) {
  assume(d1 > d0);
  vfloat acc[NB][RV] = {};
  if (add)
    for (int j = 0; j < NB; ++j)
      for (int r = 0; r < RV; ++r) acc[j][r] = vload(out + j * RP + c + r * kLanes);
  for (int64_t d = d0; d < d1; ++d) {
    vfloat x[RV];
    for (int r = 0; r < RV; ++r) x[r] = vload(xt + d * RP + c + r * kLanes);
    for (int j = 0; j < NB; ++j) {
      const vfloat e = vsplat(row[j][d]);
      for (int r = 0; r < RV; ++r) acc[j][r] += e * x[r];
    }
  }
  for (int j = 0; j < NB; ++j)
    for (int r = 0; r < RV; ++r) vstore(out + j * RP + c + r * kLanes, acc[j][r]);
}

}  // namespace lanes
}  // namespace roseinfer
