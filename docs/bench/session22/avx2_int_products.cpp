// The integer products AVX2 has, in a 4 x 3 register tile as a linear would use them (weights
// from L1, x broadcast per row), one thread, hot: what int8 activations could buy over the FMA
// tile (session 20's tile_shapes_microbench: 84-88 GFLOP/s = 42-44 GMAC/s a thread).
//   g++ -O3 -mavx2 -mfma -o avx2_int_products avx2_int_products.cpp && ./avx2_int_products
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
volatile int sinki; alignas(64) float outf[256]; alignas(64) int outi[256];
template <class F> double run(F f, long n) {
  auto t0 = std::chrono::steady_clock::now(); f(n); auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}
alignas(64) int16_t wi[8192]; alignas(64) int16_t xi[8192];
alignas(64) int8_t wb[16384]; alignas(64) int8_t xb[16384];
constexpr int R=4, T=3; constexpr long KS=64; // k-steps per pass (stays in L1)
// s16: per k-step 2 inputs
__attribute__((noinline)) void madd_tile(long n) {
  __m256i a[R*T]; for (int i=0;i<R*T;i++) a[i]=_mm256_setzero_si256();
  for (long it=0;it<n;it++) for (long k=0;k<KS;k++){
    __m256i w[T]; for(int t=0;t<T;t++) w[t]=_mm256_load_si256((const __m256i*)(wi+(k*T+t)*16));
    for(int r=0;r<R;r++){ int32_t two; memcpy(&two, xi+r*2*KS+2*k, 4); __m256i x=_mm256_set1_epi32(two);
      for(int t=0;t<T;t++) a[r*T+t]=_mm256_add_epi32(a[r*T+t],_mm256_madd_epi16(w[t],x)); }
  }
  for(int i=0;i<R*T;i++) _mm256_store_si256((__m256i*)(outi+8*i),a[i]);
}
// u8/s8: per k-step 4 inputs; |x| broadcast, sign applied to w
__attribute__((noinline)) void maddubs_tile(long n) {
  __m256i a[R*T]; for (int i=0;i<R*T;i++) a[i]=_mm256_setzero_si256();
  const __m256i one=_mm256_set1_epi16(1);
  for (long it=0;it<n;it++) for (long k=0;k<KS;k++){
    __m256i w[T]; for(int t=0;t<T;t++) w[t]=_mm256_load_si256((const __m256i*)(wb+(k*T+t)*32));
    for(int r=0;r<R;r++){ int32_t four; memcpy(&four, xb+r*4*KS+4*k, 4); __m256i x=_mm256_set1_epi32(four);
      __m256i ax=_mm256_abs_epi8(x);
      for(int t=0;t<T;t++) a[r*T+t]=_mm256_add_epi32(a[r*T+t],_mm256_madd_epi16(_mm256_maddubs_epi16(ax,_mm256_sign_epi8(w[t],x)),one)); }
  }
  for(int i=0;i<R*T;i++) _mm256_store_si256((__m256i*)(outi+8*i),a[i]);
}
// maddubs where the precomputed |x| and sign(x) are stored: x already split -> per (r,t): sign, maddubs, madd, add
int main(){
  for(int i=0;i<8192;i++){wi[i]=i%100-50;xi[i]=i%50-25;}
  for(int i=0;i<16384;i++){wb[i]=i%200-100;xb[i]=i%100-50;}
  long n=200000000/(R*T)/KS;
  for(int rep=0;rep<3;rep++){
  double t=run(madd_tile,n); printf("vpmaddwd+vpaddd (int16 x int16), 4x3 tile: %.1f GMAC/s\n", n*KS*R*T*16/t/1e9);
  t=run(maddubs_tile,n); printf("vpabsb/vpsignb+vpmaddubsw+vpmaddwd+vpaddd (int8 x int8), 4x3 tile: %.1f GMAC/s\n", n*KS*R*T*32/t/1e9);
  }
}
