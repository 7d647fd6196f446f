/* test_golden_guard.c - the checks before a golden file is parsed
 * (conformance/golden_guard.c): the MANIFEST sha256 check and the parse in
 * a child process that turns a libhdf5 crash or hang into an input error. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden_guard.h"
#include "golden_io.h"
#include "sha256.h"
#include "mt_test.h"

#define GOLDEN MT_SOURCE_DIR "/golden"

static char dir[512];

static const char *tmpdir(void) {
  snprintf(dir, sizeof dir, "%s/test_golden_guard.XXXXXX", MT_BINARY_DIR);
  if (!mkdtemp(dir)) abort();
  return dir;
}

static void put(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, n, f) != n) abort();
  fclose(f);
}

/* *n bytes of path (malloc'd) */
static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(*n ? *n : 1);
  if (fread(b, 1, *n, f) != *n) abort();
  fclose(f);
  return b;
}

static void rm_dir(const char *d) {
  DIR *dd = opendir(d);
  struct dirent *e;
  char p[1536]; /* d (up to 1023) + / + a name (up to 255) */
  while (dd && (e = readdir(dd)))
    if (e->d_name[0] != '.') {
      snprintf(p, sizeof p, "%s/%s", d, e->d_name);
      unlink(p);
    }
  if (dd) closedir(dd);
  rmdir(d);
}

/* d/masked.h5 = golden/masked.h5 (flip: xor one byte at 1000), d/MANIFEST = manifest */
static void setup(const char *d, int flip, const char *manifest) {
  size_t n;
  unsigned char *b = slurp(GOLDEN "/masked.h5", &n);
  char p[1024];
  if (flip) b[1000] ^= 0x20;
  snprintf(p, sizeof p, "%s/masked.h5", d);
  put(p, b, n);
  free(b);
  if (manifest) {
    snprintf(p, sizeof p, "%s/MANIFEST", d);
    put(p, manifest, strlen(manifest));
  }
}

static const char *committed_manifest(void) {
  static char m[8192];
  size_t n;
  unsigned char *b = slurp(GOLDEN "/MANIFEST", &n);
  if (!b || n >= sizeof m) abort();
  memcpy(m, b, n);
  m[n] = 0;
  free(b);
  return m;
}

/* The case count MANIFEST gives for file (`<file> <count> <sha256>`). */
static int manifest_count(const char *file) {
  char key[300];
  snprintf(key, sizeof key, "\n%s ", file); /* a line's first word: not grad_masked.h5's tail */
  const char *at = strstr(committed_manifest(), key);
  return at ? atoi(at + strlen(key)) : -1;
}

TEST(committed_goldens_pass_the_manifest_with_its_case_counts) {
  DIR *d = opendir(GOLDEN);
  struct dirent *e;
  int n = 0;
  while (d && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".h5") != 0) continue;
    char p[1024];
    mt_error err = {0};
    snprintf(p, sizeof p, "%s/%s", GOLDEN, e->d_name);
    CHECK_STATUS(mt_golden_check(p, 1, GOLDEN, &err), MT_OK);
    CHECK_HAS(err.msg, ""); /* no warning: MANIFEST exists */
    CHECK_EQ_INT(err.msg[0], 0);
    /* MANIFEST vouches for them, so a run reads them in process (the
     * conformance.* tests load every case): here the headers, every case
     * the MANIFEST counts */
    mt_golden_file *f = NULL;
    CHECK_STATUS(mt_golden_open(p, &f, &err), MT_OK);
    if (f) {
      CHECK_EQ_INT(f->n_cases, manifest_count(e->d_name));
      mt_golden_close(f);
    }
    n++;
  }
  if (d) closedir(d);
  CHECK(n > 0);
}

TEST(manifest_mismatch_names_the_file_both_hashes_and_the_fix) {
  const char *d = tmpdir();
  char p[1024];
  mt_error err = {0};
  setup(d, 1, committed_manifest());
  snprintf(p, sizeof p, "%s/masked.h5", d);
  CHECK_STATUS(mt_golden_check(p, 1, d, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "masked.h5: corrupt or changed file: its sha256 is ");
  char flipped[65];
  mt_error herr = {0};
  CHECK_STATUS(mt_sha256_file(p, flipped, &herr), MT_OK); /* the changed copy's hash */
  CHECK_HAS(err.msg, flipped);
  CHECK_HAS(err.msg, "MANIFEST says");
  CHECK_HAS(err.msg, "regenerate");
  CHECK_HAS(err.msg, "--golden");
  /* the same file named with --golden: the MANIFEST beside it does not vouch
   * for it, which is no error: the parse alone */
  mt_error e2 = {0};
  mt_status st = mt_golden_check(p, 0, d, &e2);
  CHECK(st == MT_OK || !strstr(e2.msg, "sha256"));
  rm_dir(d);
}

TEST(file_missing_from_manifest_is_an_error) {
  const char *d = tmpdir();
  char p[1024];
  mt_error err = {0};
  setup(d, 0, "# mtcs golden files\nreduce.h5 140 52af0ae211f7ab1a3daf969f928ac5737653ad2d260ff0c10e1201ce0b56318c\n");
  snprintf(p, sizeof p, "%s/masked.h5", d);
  CHECK_STATUS(mt_golden_check(p, 1, d, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "masked.h5: not listed in ");
  CHECK_HAS(err.msg, "/MANIFEST");
  rm_dir(d);
}

TEST(malformed_manifest_line_names_manifest_and_line) {
  const char *d = tmpdir();
  char p[1024];
  mt_error err = {0};
  setup(d, 0, "# header\nmasked.h5 26 not-a-hash\n");
  snprintf(p, sizeof p, "%s/masked.h5", d);
  CHECK_STATUS(mt_golden_check(p, 1, d, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "MANIFEST:2: not a MANIFEST line");
  rm_dir(d);
}

/* The sha256 in upper case (masked.h5's has an f) and a case count of 0
 * are a MANIFEST line; a negative count is not. */
TEST(manifest_hash_in_upper_case_and_count_0_pass_a_negative_count_does_not) {
  const char *key = "\nmasked.h5 ", *at = strstr(committed_manifest(), key);
  char hash[65] = "", line[256], p[1024];
  if (at) sscanf(strchr(at + strlen(key), ' ') + 1, "%64s", hash);
  CHECK(strlen(hash) == 64 && strchr(hash, 'f'));
  for (char *c = hash; *c; c++)
    if (*c >= 'a' && *c <= 'f') *c = (char)(*c - 'a' + 'A');
  for (int neg = 0; neg <= 1; neg++) {
    const char *d = tmpdir();
    mt_error err = {0};
    snprintf(line, sizeof line, "masked.h5 %d %s\n", neg ? -1 : 0, hash);
    setup(d, 0, line);
    snprintf(p, sizeof p, "%s/masked.h5", d);
    if (neg) {
      CHECK_STATUS(mt_golden_check(p, 1, d, &err), MT_INVALID_FORMAT);
      CHECK_HAS(err.msg, "MANIFEST:1: not a MANIFEST line");
    } else {
      CHECK_STATUS(mt_golden_check(p, 1, d, &err), MT_OK);
    }
    rm_dir(d);
  }
}

/* --golden-dir g, a name of one letter relative to the working directory:
 * g/MANIFEST is the one checked (a changed g/masked.h5 is refused), not
 * ./MANIFEST as for an empty name. */
TEST(a_one_letter_golden_dir_is_checked_against_its_own_manifest) {
  const char *d = tmpdir();
  char g[1024], cwd[4096];
  mt_error err = {0};
  snprintf(g, sizeof g, "%s/g", d);
  CHECK(getcwd(cwd, sizeof cwd) != NULL);
  CHECK(mkdir(g, 0700) == 0);
  setup(g, 1, committed_manifest());
  CHECK(chdir(d) == 0);
  CHECK_STATUS(mt_golden_check("g/masked.h5", 1, "g", &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "g/masked.h5: corrupt or changed file");
  CHECK(chdir(cwd) == 0);
  rm_dir(g);
  rm_dir(d);
}

TEST(no_manifest_is_a_warning_and_the_file_is_still_parsed) {
  const char *d = tmpdir();
  char p[1024];
  mt_error err = {0};
  setup(d, 0, NULL);
  snprintf(p, sizeof p, "%s/masked.h5", d);
  CHECK_STATUS(mt_golden_check(p, 1, d, &err), MT_OK);
  CHECK_HAS(err.msg, "MANIFEST does not exist: the sha256 of the golden files is not checked");
  rm_dir(d);
}

/* What a MANIFEST vouches for is not parsed again; anything else is. A file
 * that is not HDF5 at all shows which: the child parse refuses it. */
TEST(manifest_vouches_for_its_bytes_and_nothing_else) {
  const char *d = tmpdir();
  char p[1024], hash[65], line[256];
  mt_error err = {0};
  snprintf(p, sizeof p, "%s/notes.h5", d);
  put(p, "not hdf5\n", 9);
  CHECK_STATUS(mt_sha256_file(p, hash, &err), MT_OK);
  snprintf(line, sizeof line, "notes.h5 3 %s\n", hash);
  char m[1024];
  snprintf(m, sizeof m, "%s/MANIFEST", d);
  put(m, line, strlen(line));
  /* listed with its own sha256: trusted, from the directory or by name */
  CHECK_STATUS(mt_golden_check(p, 1, d, &err), MT_OK);
  CHECK_STATUS(mt_golden_check(p, 0, NULL, &err), MT_OK);
  /* MTCS_CHECK_PARSE=always: parsed all the same */
  setenv("MTCS_CHECK_PARSE", "always", 1);
  CHECK_STATUS(mt_golden_check(p, 1, d, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "notes.h5: not an HDF5 file");
  CHECK_STATUS(mt_golden_check(p, 0, NULL, &err), MT_INVALID_FORMAT);
  unsetenv("MTCS_CHECK_PARSE");
  /* named with --golden beside a MANIFEST with another hash, or without its
   * line: no MANIFEST error, the parse */
  line[20] = line[20] == '0' ? '1' : '0';
  put(m, line, strlen(line));
  CHECK_STATUS(mt_golden_check(p, 0, NULL, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "notes.h5: not an HDF5 file");
  put(m, "# nothing listed\n", 17);
  CHECK_STATUS(mt_golden_check(p, 0, NULL, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "notes.h5: not an HDF5 file");
  unlink(m);
  CHECK_STATUS(mt_golden_check(p, 0, NULL, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "notes.h5: not an HDF5 file");
  rm_dir(d);
}

TEST(child_parse_reports_the_readers_own_error_and_case_count) {
  int crashed = 5, n = 0;
  mt_error err = {0};
  CHECK_STATUS(mt_golden_parse_isolated(GOLDEN "/masked.h5", 0, &crashed, &n, &err), MT_OK);
  CHECK_EQ_INT(crashed, 0);
  CHECK_EQ_INT(n, manifest_count("masked.h5"));
  const char *d = tmpdir();
  char p[1024];
  snprintf(p, sizeof p, "%s/notes.h5", d);
  put(p, "not hdf5\n", 9);
  CHECK_STATUS(mt_golden_parse_isolated(p, 0, &crashed, &n, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "notes.h5: not an HDF5 file");
  CHECK_EQ_INT(crashed, 0);
  rm_dir(d);
}

/* A reader that never returns: a FIFO with no writer blocks the child in
 * open(); it is killed at the timeout and the file is an input error. */
TEST(child_parse_that_hangs_is_killed_at_the_timeout) {
  const char *d = tmpdir();
  char p[1024];
  int crashed = 0;
  mt_error err = {0};
  snprintf(p, sizeof p, "%s/hang.h5", d);
  CHECK(mkfifo(p, 0600) == 0);
  CHECK_STATUS(mt_golden_parse_isolated(p, 0.3, &crashed, NULL, &err), MT_INVALID_FORMAT);
  CHECK_EQ_INT(crashed, -1);
  CHECK_HAS(err.msg, "hang.h5: corrupt file (reading it took more than 0.3 s");
  rm_dir(d);
}

/* Inputs that crash (or hang) libhdf5 itself, found by byte flips and by
 * fuzz_golden: each must be an input error here, never a signal. */
TEST(hdf5_crash_regressions_are_input_errors_not_signals) {
  const char *rd = MT_SOURCE_DIR "/tests/fuzz/regressions/hdf5-crash";
  DIR *d = opendir(rd);
  struct dirent *e;
  int n = 0, crashed_n = 0;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char p[1024];
    int crashed = 0;
    mt_error err = {0};
    snprintf(p, sizeof p, "%s/%s", rd, e->d_name);
    mt_status st = mt_golden_parse_isolated(p, 2.0, &crashed, NULL, &err);
    CHECK(st != MT_OK);
    CHECK_HAS(err.msg, e->d_name);
    if (crashed) crashed_n++;
    n++;
  }
  if (d) closedir(d);
  printf("  %d regression file(s), %d crashed or hung libhdf5 in the child\n", n, crashed_n);
}

MT_TEST_MAIN({"committed_goldens_pass_the_manifest_with_its_case_counts",
              committed_goldens_pass_the_manifest_with_its_case_counts},
             {"manifest_mismatch_names_the_file_both_hashes_and_the_fix",
              manifest_mismatch_names_the_file_both_hashes_and_the_fix},
             {"file_missing_from_manifest_is_an_error", file_missing_from_manifest_is_an_error},
             {"malformed_manifest_line_names_manifest_and_line",
              malformed_manifest_line_names_manifest_and_line},
             {"manifest_hash_in_upper_case_and_count_0_pass_a_negative_count_does_not",
              manifest_hash_in_upper_case_and_count_0_pass_a_negative_count_does_not},
             {"a_one_letter_golden_dir_is_checked_against_its_own_manifest",
              a_one_letter_golden_dir_is_checked_against_its_own_manifest},
             {"no_manifest_is_a_warning_and_the_file_is_still_parsed",
              no_manifest_is_a_warning_and_the_file_is_still_parsed},
             {"manifest_vouches_for_its_bytes_and_nothing_else",
              manifest_vouches_for_its_bytes_and_nothing_else},
             {"child_parse_reports_the_readers_own_error_and_case_count",
              child_parse_reports_the_readers_own_error_and_case_count},
             {"child_parse_that_hangs_is_killed_at_the_timeout",
              child_parse_that_hangs_is_killed_at_the_timeout},
             {"hdf5_crash_regressions_are_input_errors_not_signals",
              hdf5_crash_regressions_are_input_errors_not_signals})
