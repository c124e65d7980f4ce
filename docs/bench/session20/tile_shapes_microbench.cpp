// Session 20: register tiles of lane_rows.h's block_products (as of 42c1437, one thread, hot data),
// 1x12, 2x6 (the two the linears use), 3x4, 4x3, 2x4 and 3x3 (row vectors x weight rows), GFLOP/s
// over 12 weight rows of K = 576 and MP rows of x along the lanes.
//   g++ -O3 -march=native -o /tmp/tiles docs/bench/session20/tile_shapes_microbench.cpp && /tmp/tiles 24 && /tmp/tiles 48
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

template <int RV, int NB>
double run(long K, long MP, int reps, const float* xt, const float* const* row, float* out) {
  auto t0=std::chrono::steady_clock::now();
  for(int i=0;i<reps;++i)
    for(int j=0;j<12;j+=NB) for(long c=0;c+RV*8<=MP;c+=RV*8) block_products<RV,NB>(xt,MP,row+j,out+j*MP,K,c);
  double s=std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count();
  long cols = MP / (RV*8) * RV * 8;
  return 2.0*12*K*cols*reps/s/1e9;
}
int main(int argc,char**argv){
  long K=576, MP=atoi(argv[1]);
  std::vector<float> xt(K*MP,1.f), w(12*K,0.5f), out(12*MP);
  const float* row[12]; for(int j=0;j<12;++j) row[j]=w.data()+j*K;
  int reps=20000;
  for (int r=0;r<3;++r)
  printf("MP=%ld 1x12 %.1f  2x6 %.1f  3x4 %.1f  4x3 %.1f  2x4 %.1f 3x3 %.1f GFLOP/s\n",MP,
    run<1,12>(K,MP,reps,xt.data(),row,out.data()), run<2,6>(K,MP,reps,xt.data(),row,out.data()),
    run<3,4>(K,MP,reps,xt.data(),row,out.data()), run<4,3>(K,MP,reps,xt.data(),row,out.data()),
    run<2,4>(K,MP,reps,xt.data(),row,out.data()), run<3,3>(K,MP,reps,xt.data(),row,out.data()));
}
