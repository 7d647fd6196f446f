/* sha256.h - SHA-256 (FIPS 180-4), for checking golden files against
 * golden/MANIFEST without a crypto library. Not constant-time: for file
 * integrity, not secrets. */
#ifndef MT_CONF_SHA256_H
#define MT_CONF_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "mt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mt_sha256 {
  uint32_t h[8];
  uint64_t n_bytes;   /* message length so far */
  uint8_t block[64];  /* pending bytes of the current block */
  size_t n_block;
} mt_sha256;

void mt_sha256_init(mt_sha256 *s);
void mt_sha256_update(mt_sha256 *s, const void *data, size_t n);
void mt_sha256_final(mt_sha256 *s, uint8_t digest[32]);
/* digest as 64 lowercase hex digits + NUL */
void mt_sha256_hex(const uint8_t digest[32], char hex[65]);
/* The sha256 of a file's bytes as hex. IO_ERROR naming the file if it
 * cannot be read. */
mt_status mt_sha256_file(const char *path, char hex[65], mt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_SHA256_H */
