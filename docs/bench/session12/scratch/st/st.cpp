#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <immintrin.h>
static inline __m256 ld(const int8_t* p){return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*)p)));}
static inline float hs(__m256 v){__m128 s=_mm_add_ps(_mm256_castps256_ps128(v),_mm256_extractf128_ps(v,1));s=_mm_add_ps(s,_mm_movehl_ps(s,s));return _mm_cvtss_f32(_mm_add_ss(s,_mm_movehdup_ps(s)));}
// A: rows interleaved R=4 (as kernel)
torch::Tensor A(torch::Tensor x, torch::Tensor w, int64_t pf){
  int64_t N=w.size(0),K=w.size(1); auto y=torch::empty({N}); const float*xf=x.data_ptr<float>(); const int8_t*W=w.data_ptr<int8_t>(); float*Y=y.data_ptr<float>();
  at::parallel_for(0,N/32,1,[&](int64_t c0,int64_t c1){for(int64_t c=c0;c<c1;++c)for(int64_t n=c*32;n<c*32+32;n+=4){
    __m256 a[4]; for(int r=0;r<4;++r)a[r]=_mm256_setzero_ps(); const int8_t*wr=W+n*K; const int8_t* ah=wr+pf*K;
    for(int64_t k=0;k<K;k+=8){ if(k%64==0) for(int r=0;r<4;++r)_mm_prefetch((const char*)(ah+r*K+k),_MM_HINT_T0);
      __m256 xv=_mm256_loadu_ps(xf+k); for(int r=0;r<4;++r)a[r]=_mm256_fmadd_ps(xv,ld(wr+r*K+k),a[r]);}
    for(int r=0;r<4;++r)Y[n+r]=hs(a[r]);}});
  return y;}
// B: packed [N/4, K/8, 4, 8]
torch::Tensor B(torch::Tensor x, torch::Tensor w, int64_t pf){
  int64_t N=w.size(0)*4,K=w.size(1)/4; auto y=torch::empty({N}); const float*xf=x.data_ptr<float>(); const int8_t*W=w.data_ptr<int8_t>(); float*Y=y.data_ptr<float>();
  at::parallel_for(0,N/32,1,[&](int64_t c0,int64_t c1){for(int64_t c=c0;c<c1;++c)for(int64_t n=c*32;n<c*32+32;n+=4){
    __m256 a[4]; for(int r=0;r<4;++r)a[r]=_mm256_setzero_ps(); const int8_t*wr=W+n*K;
    for(int64_t k=0;k<K;k+=8){ const int8_t*p=wr+k*4; if(pf && (k*4)%64==0) _mm_prefetch((const char*)(p+pf*64),_MM_HINT_T0);
      __m256 xv=_mm256_loadu_ps(xf+k); for(int r=0;r<4;++r)a[r]=_mm256_fmadd_ps(xv,ld(p+r*8),a[r]);}
    for(int r=0;r<4;++r)Y[n+r]=hs(a[r]);}});
  return y;}
// C: packed, 2 accumulators per row
torch::Tensor C(torch::Tensor x, torch::Tensor w, int64_t pf){
  int64_t N=w.size(0)*4,K=w.size(1)/4; auto y=torch::empty({N}); const float*xf=x.data_ptr<float>(); const int8_t*W=w.data_ptr<int8_t>(); float*Y=y.data_ptr<float>();
  at::parallel_for(0,N/32,1,[&](int64_t c0,int64_t c1){for(int64_t c=c0;c<c1;++c)for(int64_t n=c*32;n<c*32+32;n+=4){
    __m256 a[4],b[4]; for(int r=0;r<4;++r)a[r]=b[r]=_mm256_setzero_ps(); const int8_t*wr=W+n*K;
    for(int64_t k=0;k<K;k+=16){ const int8_t*p=wr+k*4; if(pf) _mm_prefetch((const char*)(p+pf*64),_MM_HINT_T0);
      __m256 xv=_mm256_loadu_ps(xf+k), xv2=_mm256_loadu_ps(xf+k+8); for(int r=0;r<4;++r){a[r]=_mm256_fmadd_ps(xv,ld(p+r*8),a[r]); b[r]=_mm256_fmadd_ps(xv2,ld(p+32+r*8),b[r]);}}
    for(int r=0;r<4;++r)Y[n+r]=hs(_mm256_add_ps(a[r],b[r]));}});
  return y;}
// D: plain layout, one row at a time, 4 accumulators, linear prefetch
torch::Tensor D(torch::Tensor x, torch::Tensor w, int64_t pf){
  int64_t N=w.size(0),K=w.size(1); auto y=torch::empty({N}); const float*xf=x.data_ptr<float>(); const int8_t*W=w.data_ptr<int8_t>(); float*Y=y.data_ptr<float>();
  at::parallel_for(0,N/32,1,[&](int64_t c0,int64_t c1){for(int64_t n=c0*32;n<c1*32;++n){
    __m256 a0=_mm256_setzero_ps(),a1=a0,a2=a0,a3=a0; const int8_t*wr=W+n*K;
    for(int64_t k=0;k<K;k+=32){ if(pf && k%64==0) _mm_prefetch((const char*)(wr+k+pf*64),_MM_HINT_T0);
      a0=_mm256_fmadd_ps(_mm256_loadu_ps(xf+k),ld(wr+k),a0);
      a1=_mm256_fmadd_ps(_mm256_loadu_ps(xf+k+8),ld(wr+k+8),a1);
      a2=_mm256_fmadd_ps(_mm256_loadu_ps(xf+k+16),ld(wr+k+16),a2);
      a3=_mm256_fmadd_ps(_mm256_loadu_ps(xf+k+24),ld(wr+k+24),a3);}
    Y[n]=hs(_mm256_add_ps(_mm256_add_ps(a0,a1),_mm256_add_ps(a2,a3)));}});
  return y;}
PYBIND11_MODULE(TORCH_EXTENSION_NAME,m){m.def("A",&A);m.def("B",&B);m.def("C",&C);m.def("D",&D);}
