/* test_sha256.c - SHA-256 (conformance/sha256.c) against the FIPS 180-4 /
 * NIST example vectors, split at every offset, and the committed goldens
 * against golden/MANIFEST (the same check `mtcs run` makes). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_test.h"
#include "sha256.h"

static void hash_str(const char *s, size_t n, char hex[65]) {
  mt_sha256 c;
  uint8_t d[32];
  mt_sha256_init(&c);
  mt_sha256_update(&c, s, n);
  mt_sha256_final(&c, d);
  mt_sha256_hex(d, hex);
}

/* NIST CSRC "SHA256.pdf" examples and the FIPS 180-2 long message. */
TEST(sha256_matches_the_nist_vectors) {
  char hex[65];
  hash_str("", 0, hex);
  CHECK_HAS(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  hash_str("abc", 3, hex);
  CHECK_HAS(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  hash_str(m448, strlen(m448), hex);
  CHECK_HAS(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                     "klmnopqrlmnopqrsmnopqrstnopqrstu";
  hash_str(m896, strlen(m896), hex);
  CHECK_HAS(hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(sha256_of_a_million_a_fed_in_odd_pieces) {
  mt_sha256 c;
  uint8_t d[32];
  char hex[65], a[997];
  memset(a, 'a', sizeof a);
  mt_sha256_init(&c);
  size_t left = 1000000;
  for (size_t piece = 1; left > 0; piece = piece % 997 + 1) {
    size_t n = piece < left ? piece : left;
    mt_sha256_update(&c, a, n);
    left -= n;
  }
  mt_sha256_final(&c, d);
  mt_sha256_hex(d, hex);
  CHECK_HAS(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Padding edges: 55, 56, 63, 64, 65 bytes, whole or split anywhere, agree. */
TEST(sha256_does_not_depend_on_how_the_input_is_split) {
  char msg[130];
  for (int k = 0; k < 130; k++) msg[k] = (char)('A' + k % 53);
  for (size_t n = 50; n <= 130; n++) {
    char whole[65], split[65];
    hash_str(msg, n, whole);
    for (size_t at = 0; at <= n; at += 7) {
      mt_sha256 c;
      uint8_t d[32];
      mt_sha256_init(&c);
      mt_sha256_update(&c, msg, at);
      mt_sha256_update(&c, msg + at, n - at);
      mt_sha256_final(&c, d);
      mt_sha256_hex(d, split);
      CHECK(strcmp(whole, split) == 0);
    }
  }
}

TEST(sha256_file_matches_golden_manifest_and_names_a_missing_file) {
  char line[1024], path[1024], hex[65];
  mt_error err = {0};
  FILE *m = fopen(MT_SOURCE_DIR "/golden/MANIFEST", "r");
  int n = 0;
  if (!m) {
    printf("  (no golden/MANIFEST: nothing to compare)\n");
  } else {
    while (fgets(line, sizeof line, m)) {
      char name[512], want[128];
      long long count;
      if (line[0] == '#' || sscanf(line, "%511s %lld %127s", name, &count, want) != 3) continue;
      snprintf(path, sizeof path, "%s/golden/%s", MT_SOURCE_DIR, name);
      CHECK_STATUS(mt_sha256_file(path, hex, &err), MT_OK);
      CHECK_HAS(hex, want);
      n++;
    }
    fclose(m);
    CHECK(n > 0);
  }
  CHECK_STATUS(mt_sha256_file(MT_SOURCE_DIR "/no/such/file.h5", hex, &err), MT_IO_ERROR);
  CHECK_HAS(err.msg, "no/such/file.h5");
}

MT_TEST_MAIN({"sha256_matches_the_nist_vectors", sha256_matches_the_nist_vectors},
             {"sha256_of_a_million_a_fed_in_odd_pieces", sha256_of_a_million_a_fed_in_odd_pieces},
             {"sha256_does_not_depend_on_how_the_input_is_split",
              sha256_does_not_depend_on_how_the_input_is_split},
             {"sha256_file_matches_golden_manifest_and_names_a_missing_file",
              sha256_file_matches_golden_manifest_and_names_a_missing_file})
