// lane_rows.h's block_products (copied here as of commit 0d7b437, one thread, data hot in
// L1/L2): GFLOP/s of the <2, 6> and <1, 12> register tiles over 12 weight rows of K = 576 and
// MP rows of x along the lanes.
//   g++ -O3 -march=native -o /tmp/bp docs/bench/session17/block_products_peak.cpp && /tmp/bp 32
#include <chrono>
#include <cstdio>
#include <vector>
#include <cstring>
#include <immintrin.h>
typedef float vfloat __attribute__((vector_size(32)));
constexpr long kLanes=8;
inline vfloat vload(const float* p){vfloat v;std::memcpy(&v,p,sizeof(v));return v;}
inline void vstore(float* p, vfloat v){std::memcpy(p,&v,sizeof(v));}
inline vfloat vsplat(float x){return (vfloat)_mm256_set1_ps(x);}
template <int RV, int NB>
__attribute__((noinline)) void block_products(const float* __restrict xt, long RP, const float* const* row,
                           float* __restrict out, long D, long c) {
  vfloat acc[NB][RV] = {};
  for (long d = 0; d < D; ++d) {
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
int main(int argc,char**argv){
  long K=576, MP=atoi(argv[1]);
  std::vector<float> xt(K*MP,1.f), w(12*K,0.5f), out(12*MP);
  const float* row[12]; for(int j=0;j<12;++j) row[j]=w.data()+j*K;
  int reps=20000;
  auto t0=std::chrono::steady_clock::now();
  for(int i=0;i<reps;++i){
    for(int j=0;j<12;j+=6) for(long c=0;c+16<=MP;c+=16) block_products<2,6>(xt.data(),MP,row+j,out.data()+j*MP,K,c);
  }
  double s=std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count();
  double fl=2.0*12*K*MP*reps;
  printf("MP=%ld (2,6): %.1f GFLOP/s\n",MP,fl/s/1e9);
  t0=std::chrono::steady_clock::now();
  for(int i=0;i<reps;++i){
    for(long c=0;c+8<=MP;c+=8) block_products<1,12>(xt.data(),MP,row,out.data(),K,c);
  }
  s=std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count();
  printf("MP=%ld (1,12): %.1f GFLOP/s\n",MP,fl/s/1e9);
}
