// sort_keys_descending copied verbatim from roseinfer/kernels/sampling.cpp @6e2e28d, vs std::sort
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>
void sort_keys_descending(uint64_t* keys, int64_t n, std::vector<uint64_t>& spare) {
  uint64_t all = ~uint64_t{0}, any = 0;
  for (int64_t i = 0; i < n; ++i) all &= keys[i], any |= keys[i];
  spare.resize(n);
  uint64_t* from = keys;
  uint64_t* to = spare.data();
  for (int shift = 0; shift < 64; shift += 8) {
    if ((((all ^ any) >> shift) & 0xFF) == 0) continue;  // the same byte in every key
    int64_t start[257] = {};
    for (int64_t i = 0; i < n; ++i) ++start[256 - ((from[i] >> shift) & 0xFF)];  // descending
    for (int d = 1; d < 257; ++d) start[d] += start[d - 1];
    for (int64_t i = 0; i < n; ++i) to[start[255 - ((from[i] >> shift) & 0xFF)]++] = from[i];
    std::swap(from, to);
  }
  if (from != keys) std::copy(from, from + n, keys);
}
int main() {
  std::mt19937_64 g(1);
  long bad = 0, cases = 0;
  std::vector<uint64_t> spare;
  for (int t = 0; t < 20000; ++t) {
    int64_t n = 1 + g() % (t < 19000 ? 300 : 70000);
    int mode = t % 6;
    std::vector<uint64_t> k(n);
    for (auto& x : k) {
      uint64_t r = g();
      if (mode == 0) x = r;                                  // every byte varies
      else if (mode == 1) x = r & 0x00FF00000000FF00ull;     // most bytes shared (zero)
      else if (mode == 2) x = (r % 3) * 0x0101010101010101ull;  // duplicates, 3 values
      else if (mode == 3) x = ~uint64_t{0} - (r & 0xFF);    // top bytes 0xFF
      else if (mode == 4) x = 0x8000000000000000ull | (r >> 40);  // extremes
      else x = (r & 1) ? ~uint64_t{0} : 0;                 // only 0 and max
    }
    auto a = k, b = k;
    sort_keys_descending(a.data(), n, spare);
    std::sort(b.begin(), b.end(), std::greater<uint64_t>());
    bad += a != b; ++cases;
  }
  printf("cases %ld mismatches %ld\n", cases, bad);
}
