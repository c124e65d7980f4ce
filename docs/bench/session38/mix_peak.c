// Session 38: vpdpbusd and vdpbf16ps chains in registers, alone and mixed (XNI, XNB chains):
//   gcc -O2 -march=native -include stdlib.h -DXNI=12 -DXNB=0 mix_peak.c -o mp && ./mp
// 12 vpdpbusd chains: 8.2 G/s (two a cycle); 16 vdpbf16ps: 8.2 G/s; mixed, they share the same
// two pipes (8+8: 4.1 + 4.1 G/s; 6+12: 2.65 + 5.30).
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(int argc,char**argv){
  const int NI = XNI, NB = XNB; long iters=400000000L;
  __m512i ai[16]; __m512 af[16];
  for(int i=0;i<16;i++){ai[i]=_mm512_set1_epi32(i);af[i]=_mm512_set1_ps(i);}
  __m512i x=_mm512_set1_epi32(0x01020304), y=_mm512_set1_epi32(0x05060708);
  __m512bh p=(__m512bh)_mm512_set1_epi32(0x3f803f80), q=(__m512bh)_mm512_set1_epi32(0x3f003f00);
  double t=now();
  for(long it=0;it<iters;it++){
#define STEP(n) if(n<NI) ai[n]=_mm512_dpbusd_epi32(ai[n],x,y); if(n<NB) af[n]=_mm512_dpbf16_ps(af[n],p,q);
    STEP(0)STEP(1)STEP(2)STEP(3)STEP(4)STEP(5)STEP(6)STEP(7)STEP(8)STEP(9)STEP(10)STEP(11)STEP(12)STEP(13)STEP(14)STEP(15)
    
  }
  double dt=now()-t;
  int ni = NI<16?NI:16, nb = NB<16?NB:16;
  printf("vpdpbusd chains %d, vdpbf16ps chains %d: %.2f G vpdpbusd/s, %.2f G vdpbf16ps/s\n", ni, nb, ni*iters/dt/1e9, nb*iters/dt/1e9);
  int s=0; for(int i=0;i<16;i++) s+=_mm512_reduce_add_epi32(ai[i])+(int)_mm512_reduce_add_ps(af[i]); return s==12345;
}
