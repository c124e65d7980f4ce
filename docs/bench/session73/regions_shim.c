// Counts GOMP_parallel calls (OpenMP parallel regions) of the process it is preloaded into;
// shim_regions() reads the count. See count_regions.py.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static unsigned long long count = 0;
typedef void (*par_t)(void (*)(void *), void *, unsigned, unsigned);
void GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags) {
  static par_t real = 0;
  if (!real) real = (par_t)dlsym(RTLD_NEXT, "GOMP_parallel");
  __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
  real(fn, data, n, flags);
}
unsigned long long shim_regions(void) { return count; }
