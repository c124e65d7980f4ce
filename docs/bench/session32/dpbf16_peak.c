#include <immintrin.h>
#include <stdio.h>
#include <omp.h>
#define D(i) a##i=_mm512_dpbf16_ps(a##i,x,y);
int main(int argc,char**argv){
  int th = argc>1?atoi(argv[1]):2;
  for (int rep=0; rep<3; ++rep){
  double t0=omp_get_wtime(); long N=100000000;
  float sink=0;
  #pragma omp parallel num_threads(th) reduction(+:sink)
  {
    __m512 a0=_mm512_set1_ps(0),a1=_mm512_set1_ps(1),a2=_mm512_set1_ps(2),a3=_mm512_set1_ps(3),a4=_mm512_set1_ps(4),a5=_mm512_set1_ps(5),a6=_mm512_set1_ps(6),a7=_mm512_set1_ps(7),a8=_mm512_set1_ps(8),a9=_mm512_set1_ps(9),a10=_mm512_set1_ps(10),a11=_mm512_set1_ps(11);
    __m512bh x=(__m512bh)_mm512_set1_epi32(0x3f803f80), y=x;
    for(long n=0;n<N;n++){
      D(0)D(1)D(2)D(3)D(4)D(5)D(6)D(7)D(8)D(9)D(10)D(11)
      __asm__ volatile("" : "+v"(x));
    }
    __m512 s=_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0,a1),_mm512_add_ps(a2,a3)),_mm512_add_ps(_mm512_add_ps(a4,a5),_mm512_add_ps(a6,a7)));
    s=_mm512_add_ps(s,_mm512_add_ps(_mm512_add_ps(a8,a9),_mm512_add_ps(a10,a11)));
    sink+=_mm512_reduce_add_ps(s);
  }
  double t=omp_get_wtime()-t0;
  printf("%d threads: %.1f GFLOP/s  %.2f Ginstr/s/thread %f\n", th, N*th*12.0*64/t/1e9, N*12.0/t/1e9, sink);
  }
  return 0;
}
