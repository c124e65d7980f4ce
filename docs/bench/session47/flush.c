#include <immintrin.h>
void flush(const char* p, long bytes){ for(long i=0;i<bytes;i+=64) _mm_clflushopt(p+i); _mm_sfence(); }
