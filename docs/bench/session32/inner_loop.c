#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <omp.h>
// mimic pair_scores<NB> inner loop: R row vectors, NB keys
#ifndef R
#define R 2
#endif
#ifndef NB
#define NB 8
#endif
__attribute__((noinline)) void kern(const uint32_t* qp, long RP, const uint32_t* const* key, long pairs, float* st) {
  __m512 acc[NB][R];
  for (int j=0;j<NB;j++) for(int r=0;r<R;r++) acc[j][r]=_mm512_setzero_ps();
  for (long p=0;p<pairs;p++){
    __m512bh x[R];
    for(int r=0;r<R;r++) x[r]=(__m512bh)_mm512_loadu_si512(qp+p*RP+r*16);
    for(int j=0;j<NB;j++){
      __m512bh e=(__m512bh)_mm512_set1_epi32(key[j][p]);
      for(int r=0;r<R;r++) acc[j][r]=_mm512_dpbf16_ps(acc[j][r],x[r],e);
    }
  }
  for(int j=0;j<NB;j++) for(int r=0;r<R;r++) _mm512_storeu_ps(st+j*RP+r*16, acc[j][r]);
}
int main(int argc,char**argv){
  long pairs = atol(argv[1]);
  long RP=96;
  uint32_t* qp=aligned_alloc(64, pairs*RP*4+4096); for(long i=0;i<pairs*RP;i++) qp[i]=0x3f803f80;
  uint32_t* kbuf=aligned_alloc(64, 64*pairs*4+4096); for(long i=0;i<64*pairs;i++) kbuf[i]=0x3f803f80;
  const uint32_t* keys[64]; for(int j=0;j<64;j++) keys[j]=kbuf+j*pairs;
  float* st=aligned_alloc(64, 64*RP*4);
  long calls = 200000000L/(pairs*NB*R);
  for(int rep=0;rep<3;rep++){
    double t0=omp_get_wtime();
    for(long c=0;c<calls;c++) kern(qp, RP, keys+(c%8)*NB%64, pairs, st);
    double t=omp_get_wtime()-t0;
    printf("R=%d NB=%d pairs=%ld: %.1f GFLOP/s/core (%.0f%% of 234)\n", R, NB, pairs, calls*pairs*NB*R*64.0/t/1e9, calls*pairs*NB*R*64.0/t/1e9/234.5*100);
  }
}
