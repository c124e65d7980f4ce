// Read patterns of a decode step's K/V: 32 sequences x `ctx` tokens, blocks of 16 rows x 64 bf16
// (2 KB per head), 3 KV heads per block (6 KB), K and V in separate arrays; 2 threads, each half of
// the sequences, each sequence's blocks adjacent. Patterns: 0 whole arrays streamed; 1 per (seq,
// head): its K chunks (stride 6 KB) then its V chunks (as the kernel); 2 per seq: per block all 3
// heads' K, then all V (contiguous runs of the sequence); 3 as 1 with prefetcht0 4 blocks ahead.
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static inline __m512i rd(const char* p, size_t n, __m512i acc) {
  for (size_t i = 0; i < n; i += 64) acc = _mm512_add_epi32(acc, _mm512_load_si512(p + i));
  return acc;
}
int main(int argc, char** argv) {
  int ctx = atoi(argv[1]), pattern = atoi(argv[2]); int scatter = argc > 3 ? atoi(argv[3]) : 0;
  const int seqs = 32, BS = 16, H = 3, layers = 30;
  const size_t chunk = 2048, block = chunk * H;
  int nb = (ctx + BS - 1) / BS;
  size_t per_layer = (size_t)seqs * nb * block;
  char* K = aligned_alloc(4096, per_layer * layers); char* V = aligned_alloc(4096, per_layer * layers);
  memset(K, 1, per_layer * layers); memset(V, 1, per_layer * layers);
  int total = seqs * nb; int* perm = malloc(sizeof(int) * total);
  for (int i = 0; i < total; ++i) perm[i] = i;
  if (scatter) { srand(1); for (int i = total - 1; i > 0; --i) { int j = rand() % (i + 1); int t = perm[i]; perm[i] = perm[j]; perm[j] = t; } }
  double best = 1e9; long long sink = 0;
  for (int rep = 0; rep < 7; ++rep) {
    double t0 = now();
    for (int l = 0; l < layers; ++l) {
      const char* k = K + l * per_layer; const char* v = V + l * per_layer;
#pragma omp parallel num_threads(2) reduction(+:sink)
      {
        int tid = omp_get_thread_num();
        __m512i acc = _mm512_setzero_si512();
        for (int s = tid * seqs / 2; s < (tid + 1) * seqs / 2; ++s) {
          const char* ks = k + (size_t)s * nb * block; const char* vs = v + (size_t)s * nb * block;
          #define P(b) ((size_t)perm[s * nb + (b)])
          if (pattern == 4) {  // head-major layout [H][seqs*nb][2 KB]
            for (int h = 0; h < H; ++h) {
              for (int b = 0; b < nb; ++b) acc = rd(k + (size_t)h * seqs * nb * chunk + P(b) * chunk, chunk, acc);
              for (int b = 0; b < nb; ++b) acc = rd(v + (size_t)h * seqs * nb * chunk + P(b) * chunk, chunk, acc);
            }
          } else if (pattern == 2) {  // block-major layout, per seq all heads per block
            for (int b = 0; b < nb; ++b) acc = rd(k + P(b) * block, block, acc);
            for (int b = 0; b < nb; ++b) acc = rd(v + P(b) * block, block, acc);
          } else if (pattern == 5) {  // head-major layout, per seq all heads per block
            for (int b = 0; b < nb; ++b) for (int h = 0; h < H; ++h) acc = rd(k + (size_t)h * seqs * nb * chunk + P(b) * chunk, chunk, acc);
            for (int b = 0; b < nb; ++b) for (int h = 0; h < H; ++h) acc = rd(v + (size_t)h * seqs * nb * chunk + P(b) * chunk, chunk, acc);
          } else for (int h = 0; h < H; ++h) {  // pattern 1: block-major layout, per (seq, head)
            for (int b = 0; b < nb; ++b) acc = rd(k + P(b) * block + h * chunk, chunk, acc);
            for (int b = 0; b < nb; ++b) acc = rd(v + P(b) * block + h * chunk, chunk, acc);
          }
        }
        sink += _mm512_reduce_add_epi32(acc);
      }
    }
    double t = now() - t0; if (t < best) best = t;
  }
  double bytes = 2.0 * per_layer * layers;
  printf("ctx %d pattern %d: %.1f MB, %.2f ms, %.1f GB/s (%lld)\n", ctx, pattern, bytes / 1e6, best * 1e3, bytes / best / 1e9, sink & 1);
}
