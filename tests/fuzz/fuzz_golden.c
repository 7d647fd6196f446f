/* fuzz_golden.c - libFuzzer target for the golden reader (golden_io.c):
 * the input is a golden file; it is opened and every case is loaded
 * (mt_golden_parse_all), as `mtcs run` does. libhdf5 reads files by name
 * (and resolves the real path, so a memfd's /proc/self/fd/N will not do):
 * the input goes to one file per process in /dev/shm (tmpfs), else $TMPDIR
 * or /tmp.
 *
 * libhdf5 itself crashes on some corrupt files (H5HG_read, H5O_protect...):
 * that is what the child parse of golden_guard.c is for, and the fuzz
 * scripts (tests/fuzz/run.cmake) sort such crashes from ours by the stack.
 * FUZZ_GOLDEN_ISOLATED=1 reads each input through mt_golden_parse_isolated
 * instead (a forked child, as mtcs does), to replay inputs that crash libhdf5. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "golden_guard.h"

static int isolated = -1, verbose = -1;
static char path[512];

/* An input that crashes libhdf5 leaves its file behind: remove the files of
 * processes that are gone, so a long -fork run does not fill /dev/shm. */
static void remove_stale(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int pid;
  char p[1024];
  while (d && (e = readdir(d)))
    if (sscanf(e->d_name, "fuzz_golden.%d.h5", &pid) == 1 && kill(pid, 0) != 0 && errno == ESRCH) {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  if (d) closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (isolated < 0) {
    const char *e = getenv("FUZZ_GOLDEN_ISOLATED");
    isolated = e && e[0] == '1';
    e = getenv("FUZZ_GOLDEN_VERBOSE"); /* =1: print each input's outcome */
    verbose = e && e[0] == '1';
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    if (!dir || !dir[0]) dir = "/tmp";
    remove_stale(dir);
    snprintf(path, sizeof path, "%s/fuzz_golden.%d.h5", dir, (int)getpid());
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) abort();
  for (size_t off = 0; off < size;) {
    ssize_t w = write(fd, data + off, size - off);
    if (w <= 0) abort();
    off += (size_t)w;
  }
  close(fd);
  mt_error err = {0};
  int n = 0;
  if (isolated)
    mt_golden_parse_isolated(path, 3.0, NULL, &n, &err);
  else
    mt_golden_parse_all(path, &n, &err);
  if (verbose) fprintf(stderr, "fuzz_golden: %zu bytes: %d cases: %s\n", size, n, err.msg[0] ? err.msg : "ok");
  unlink(path); /* the next input makes it again; none is left behind at exit */
  return 0;
}
