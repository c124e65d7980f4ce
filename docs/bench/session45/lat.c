// pointer-chase latency (ns per load) over a random cycle of `bytes`, on the calling thread
#define _GNU_SOURCE
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <sched.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
double chase_ns(long bytes, long steps, int cpu){
  cpu_set_t old, s; sched_getaffinity(0,sizeof old,&old); CPU_ZERO(&s); CPU_SET(cpu,&s); sched_setaffinity(0,sizeof s,&s);
  long n=bytes/64; uint64_t* a=aligned_alloc(64,n*64); long* perm=malloc(n*sizeof(long));
  for(long i=0;i<n;i++)perm[i]=i;
  srand(1); for(long i=n-1;i>0;i--){long j=((long)rand()*RAND_MAX+rand())%(i+1); long t=perm[i];perm[i]=perm[j];perm[j]=t;}
  for(long i=0;i<n;i++) a[perm[i]*8]=(uint64_t)&a[perm[(i+1)%n]*8];
  uint64_t* p=&a[perm[0]*8];
  for(long i=0;i<n;i++) p=(uint64_t*)*p;
  double t=now(); for(long i=0;i<steps;i++) p=(uint64_t*)*p; double d=now()-t;
  free(perm); free(a); sched_setaffinity(0,sizeof old,&old);
  return p ? d/steps*1e9 : -1;
}
