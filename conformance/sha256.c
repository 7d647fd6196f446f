/* sha256.c - SHA-256 as FIPS 180-4 section 6.2 writes it: plain loops over
 * 64-byte blocks, big-endian words. Test vectors: tests/test_sha256.c. */
#include "sha256.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/* FIPS 180-4 6.2.2: one 512-bit block. */
static void compress(uint32_t h[8], const uint8_t b[64]) {
  uint32_t w[64];
  for (int t = 0; t < 16; t++)
    w[t] = (uint32_t)b[4 * t] << 24 | (uint32_t)b[4 * t + 1] << 16 | (uint32_t)b[4 * t + 2] << 8 |
           (uint32_t)b[4 * t + 3];
  for (int t = 16; t < 64; t++) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int t = 0; t < 64; t++) {
    uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = hh + S1 + ch + K[t] + w[t];
    uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t maj = (a & bb) ^ (a & c) ^ (bb & c);
    uint32_t t2 = S0 + maj;
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = bb;
    bb = a;
    a = t1 + t2;
  }
  h[0] += a, h[1] += bb, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

void mt_sha256_init(mt_sha256 *s) {
  static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->h, h0, sizeof h0);
  s->n_bytes = 0;
  s->n_block = 0;
}

void mt_sha256_update(mt_sha256 *s, const void *data, size_t n) {
  const uint8_t *p = data;
  s->n_bytes += n;
  while (n > 0) {
    size_t take = 64 - s->n_block < n ? 64 - s->n_block : n;
    memcpy(s->block + s->n_block, p, take);
    s->n_block += take;
    p += take;
    n -= take;
    if (s->n_block == 64) {
      compress(s->h, s->block);
      s->n_block = 0;
    }
  }
}

/* FIPS 180-4 5.1.1: a 1 bit, zeros, the length in bits as 64-bit big-endian. */
void mt_sha256_final(mt_sha256 *s, uint8_t digest[32]) {
  uint64_t bits = s->n_bytes * 8;
  uint8_t pad[72] = {0x80};
  size_t npad = (s->n_block < 56 ? 56 : 120) - s->n_block;
  for (int k = 0; k < 8; k++) pad[npad + k] = (uint8_t)(bits >> (56 - 8 * k));
  mt_sha256_update(s, pad, npad + 8);
  for (int k = 0; k < 8; k++) {
    digest[4 * k] = (uint8_t)(s->h[k] >> 24);
    digest[4 * k + 1] = (uint8_t)(s->h[k] >> 16);
    digest[4 * k + 2] = (uint8_t)(s->h[k] >> 8);
    digest[4 * k + 3] = (uint8_t)s->h[k];
  }
}

void mt_sha256_hex(const uint8_t digest[32], char hex[65]) {
  static const char d[] = "0123456789abcdef";
  for (int k = 0; k < 32; k++) {
    hex[2 * k] = d[digest[k] >> 4];
    hex[2 * k + 1] = d[digest[k] & 15];
  }
  hex[64] = 0;
}

mt_status mt_sha256_file(const char *path, char hex[65], mt_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return mt_err(err, MT_IO_ERROR, "cannot read %s: %s", path, strerror(errno));
  mt_sha256 s;
  uint8_t buf[1 << 16], digest[32];
  size_t n;
  mt_sha256_init(&s);
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) mt_sha256_update(&s, buf, n);
  int bad = ferror(f);
  fclose(f);
  if (bad) return mt_err(err, MT_IO_ERROR, "cannot read %s: read error", path);
  mt_sha256_final(&s, digest);
  mt_sha256_hex(digest, hex);
  return MT_OK;
}
