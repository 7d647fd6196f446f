/* cub_emu.h - CUB's DeviceRadixSort::SortPairs contract on the host, for
 * the emulations (MT_CUDA_EMU): the conformance backend's sort
 * (impl/cuda/device.cu) and the benchmarks' cub::DeviceRadixSort
 * (perf/kernels/cuda_emu_runtime.h). C++ only.
 *
 * A STABLE sort of the (key, value) pairs by the key bits [begin_bit,
 * end_bit), a signed key's sign bit flipped first as CUB's digits see it;
 * keys_in and vals_in unchanged. A call with temp NULL only sets
 * temp_bytes: one position per item, which the sort then uses, so a caller
 * that allocates less than it was told fails as on the device. 0, or -1
 * for CUB's invalid value. */
#ifndef MT_CUB_EMU_H
#define MT_CUB_EMU_H

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <type_traits>

template <typename K, typename V>
static int mt_emu_sort_pairs(void *temp, size_t &temp_bytes, const K *keys_in, K *keys_out,
                             const V *vals_in, V *vals_out, int64_t num_items, int begin_bit,
                             int end_bit) {
  typedef typename std::make_unsigned<K>::type U;
  const int bits = (int)sizeof(K) * 8;
  size_t n = num_items > 0 ? (size_t)num_items : 0, need = n * sizeof(size_t) + 1;
  if (!temp) {
    temp_bytes = need;
    return 0;
  }
  if (temp_bytes < need || begin_bit < 0 || end_bit > bits || begin_bit >= end_bit ||
      (n && (!keys_in || !keys_out || !vals_in || !vals_out)))
    return -1;
  size_t *order = (size_t *)temp;
  const int w = end_bit - begin_bit;
  auto digit = [&](size_t i) {
    uint64_t b = (uint64_t)(U)keys_in[i];
    if (std::is_signed<K>::value) b ^= (uint64_t)1 << (bits - 1);
    b >>= begin_bit;
    return w >= 64 ? b : b & (((uint64_t)1 << w) - 1);
  };
  for (size_t i = 0; i < n; i++) order[i] = i;
  std::stable_sort(order, order + n, [&](size_t a, size_t b) { return digit(a) < digit(b); });
  for (size_t j = 0; j < n; j++) {
    keys_out[j] = keys_in[order[j]];
    vals_out[j] = vals_in[order[j]];
  }
  return 0;
}

#endif /* MT_CUB_EMU_H */
