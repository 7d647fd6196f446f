/* test_byteflip.c - no golden file, however broken, takes the runner down
 * (ERR-5). Seeded random corruptions of copies of every committed golden
 * (every .h5 in golden/): 1..8 bytes xor-ed at random positions, or a truncation.
 * For each try, the parse in a child (mt_golden_parse_isolated, what
 * mt_golden_check runs on any file no MANIFEST vouches for) must return OK
 * or an error, never let a signal reach this process; every 10th try the MANIFEST check must refuse
 * the copy; every 100th try the real `mtcs run --golden <copy>` must exit
 * 0, 1 or 2 (never a signal, never 77).
 *
 *   MTCS_BYTEFLIP_TRIES  number of tries (default 400; the asan preset sets 200)
 *   MTCS_BYTEFLIP_SEED   seed (default 20261123; the asan preset sets another,
 *                        so that CI's two runs corrupt 600 different copies)
 *   MTCS_BYTEFLIP_KEEP   a directory: copies that crashed libhdf5 are saved there
 * Prints the counts at the end: tries, ok, error, crash-in-child caught.
 *
 * Under ASan a child that hits a libhdf5 bug prints a report and exits 1
 * instead of dying by a signal ("no report"). Such a copy is read again in
 * a child whose stderr is kept, and the report's stack decides: the first
 * frame in libhdf5 is libhdf5's bug (counted), the first frame in our
 * sources fails the test, report included. The children's stderr is
 * otherwise silenced, so the log shows only counts and failures. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "golden_guard.h"

typedef struct golden {
  char name[256];
  unsigned char *bytes;
  size_t size;
} golden;

static uint64_t rng_state;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static long env_long(const char *name, long dflt) {
  const char *v = getenv(name);
  return v && v[0] ? strtol(v, NULL, 10) : dflt;
}

static int write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(p, 1, n, f);
  return (fclose(f) == 0 && w == n) ? 0 : -1;
}

static int load_goldens(golden *g, int max) {
  const char *dir = MT_SOURCE_DIR "/golden";
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  if (!d) return 0;
  while ((e = readdir(d)) && n < max) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".h5") != 0 || e->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    g[n].bytes = malloc((size_t)size);
    if (size <= 0 || !g[n].bytes || fread(g[n].bytes, 1, (size_t)size, f) != (size_t)size) {
      free(g[n].bytes);
      fclose(f);
      continue;
    }
    fclose(f);
    g[n].size = (size_t)size;
    snprintf(g[n].name, sizeof g[n].name, "%s", e->d_name);
    n++;
  }
  closedir(d);
  /* readdir order is the file system's: sort, so a seed means the same tries */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && strcmp(g[j - 1].name, g[j].name) > 0; j--) {
      golden t = g[j];
      g[j] = g[j - 1];
      g[j - 1] = t;
    }
  return n;
}

/* Reads path in a child whose stderr goes to `log`; returns 1 if the
 * sanitizer report there reaches our sources before libhdf5. */
static int ours_in_report(const char *path, const char *log) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) dup2(fd, 2);
    mt_error e;
    mt_golden_parse_all(path, NULL, &e);
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  FILE *f = fopen(log, "r");
  char line[2048];
  int ours = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (!strstr(line, " in ") || line[strspn(line, " ")] != '#') continue;
    if (strstr(line, "libhdf5")) break;
    if (strstr(line, MT_SOURCE_DIR "/")) {
      ours = 1;
      break;
    }
  }
  if (ours && f) { /* show the report */
    rewind(f);
    while (fgets(line, sizeof line, f)) fputs(line, stderr);
  }
  if (f) fclose(f);
  unlink(log);
  return ours;
}

/* `mtcs run --golden path`: its wait status, or -1 if it could not run or
 * ran past 120 s (killed). */
static int run_mtcs(const char *path) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int dn = open("/dev/null", O_WRONLY);
    if (dn >= 0) {
      dup2(dn, 1);
      dup2(dn, 2);
    }
    execl(MT_BINARY_DIR "/mtcs", "mtcs", "run", "--golden", path, (char *)NULL);
    _exit(126);
  }
  int status = 0;
  for (int ms = 0; ms < 120000; ms += 10) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) return status;
    if (w < 0 && errno != EINTR) return -1;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

int main(void) {
  golden g[32];
  int ng = load_goldens(g, 32);
  if (ng == 0) {
    printf("SKIP: no golden/*.h5 to corrupt\n");
    return 77;
  }
  long tries = env_long("MTCS_BYTEFLIP_TRIES", 400);
  rng_state = (uint64_t)env_long("MTCS_BYTEFLIP_SEED", 20261123);
  const char *keep = getenv("MTCS_BYTEFLIP_KEEP");
  char dir[512], path[1024], manifest[600];
  snprintf(dir, sizeof dir, "%s/test_byteflip.XXXXXX", MT_BINARY_DIR);
  if (!mkdtemp(dir)) {
    snprintf(dir, sizeof dir, "/tmp/test_byteflip.XXXXXX");
    if (!mkdtemp(dir)) {
      perror("mkdtemp");
      return 1;
    }
  }
  /* the copy of the MANIFEST: so the copies are "from the golden directory" */
  snprintf(manifest, sizeof manifest, "%s/MANIFEST", dir);
  {
    FILE *in = fopen(MT_SOURCE_DIR "/golden/MANIFEST", "rb");
    char buf[8192];
    size_t n = in ? fread(buf, 1, sizeof buf, in) : 0;
    if (in) fclose(in);
    if (n == 0 || write_file(manifest, buf, n) != 0) manifest[0] = 0;
  }
  size_t max_size = 0;
  for (int k = 0; k < ng; k++) max_size = g[k].size > max_size ? g[k].size : max_size;
  unsigned char *buf = malloc(max_size);
  long n_ok = 0, n_err = 0, n_crash = 0, n_timeout = 0, n_noreport = 0, n_manifest = 0;
  long n_runs = 0, failures = 0, run_rc[3] = {0, 0, 0};
  time_t t0 = time(NULL);
  for (long t = 0; t < tries && buf; t++) {
    const golden *src = &g[t % ng];
    size_t size = src->size;
    memcpy(buf, src->bytes, size);
    char what[160];
    if (below(8) == 0) { /* a truncation, anywhere */
      size = below(src->size);
      snprintf(what, sizeof what, "truncated to %zu of %zu bytes", size, src->size);
    } else {
      int nflip = 1 + (int)below(8);
      size_t first = 0;
      for (int k = 0; k < nflip; k++) {
        size_t at = below(size);
        buf[at] ^= (unsigned char)(1 + below(255));
        if (k == 0) first = at;
      }
      snprintf(what, sizeof what, "%d byte(s) flipped, first at %zu", nflip, first);
    }
    snprintf(path, sizeof path, "%s/%s", dir, src->name);
    if (write_file(path, buf, size) != 0) {
      fprintf(stderr, "try %ld: cannot write %s: %s\n", t, path, strerror(errno));
      failures++;
      break;
    }
    mt_error err = {0};
    fflush(stderr);
    int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2); /* the children's sanitizer reports: sorted below */
    mt_status st = mt_golden_parse_isolated(path, 0, NULL, NULL, &err);
    dup2(saved, 2);
    close(saved);
    close(devnull);
    if (st == MT_OK) {
      n_ok++;
    } else if (strstr(err.msg, "crashed reading it")) {
      n_crash++;
      if (keep) {
        char kp[1024];
        snprintf(kp, sizeof kp, "%s/crash-%s-try%ld-seed%ld.h5", keep, src->name, t,
                 env_long("MTCS_BYTEFLIP_SEED", 20261123));
        write_file(kp, buf, size);
      }
    } else if (strstr(err.msg, "took more than")) {
      n_timeout++;
    } else if (strstr(err.msg, "no report")) {
      n_noreport++; /* under ASan: a sanitizer report in the child */
      char log[1100];
      snprintf(log, sizeof log, "%s.log", path);
      if (ours_in_report(path, log)) {
        fprintf(stderr, "try %ld (%s, %s): the report above is in our code: %s\n", t, src->name,
                what, err.msg);
        failures++;
      }
    } else {
      n_err++;
    }
    if (st != MT_OK && !strstr(err.msg, src->name)) {
      fprintf(stderr, "try %ld (%s, %s): the error does not name the file: %s\n", t, src->name,
                      what, err.msg);
      failures++;
    }
    /* From the golden directory the MANIFEST refuses any change first. */
    if (t % 10 == 0 && manifest[0]) {
      mt_error me = {0};
      mt_status ms = mt_golden_check(path, 1, dir, &me);
      if (ms != MT_INVALID_FORMAT || !strstr(me.msg, "sha256")) {
        fprintf(stderr, "try %ld (%s, %s): MANIFEST check gave %d: %s\n", t, src->name, what,
                (int)ms, me.msg);
        failures++;
      } else {
        n_manifest++;
      }
    }
    /* The real runner, end to end. */
    if (t % 100 == 0) {
      int ws = run_mtcs(path);
      n_runs++;
      if (ws == -1 || !WIFEXITED(ws) || WEXITSTATUS(ws) > 2) {
        fprintf(stderr, "try %ld (%s, %s): mtcs run --golden %s: %s %d (expected exit 0, 1 or 2)\n",
                t, src->name, what, path,
                ws == -1 ? "could not run/timed out" : WIFSIGNALED(ws) ? "killed by signal" : "exit",
                ws == -1 ? -1 : WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
        failures++;
      } else {
        run_rc[WEXITSTATUS(ws)]++;
      }
    }
  }
  unlink(path);
  if (manifest[0]) unlink(manifest);
  rmdir(dir);
  printf("byteflip: %ld tries over %d golden files (seed %ld) in %lds: %ld ok, %ld error, "
         "%ld crash-in-child caught, %ld timeout caught, %ld child sanitizer exit in libhdf5; "
         "MANIFEST refused %ld; mtcs run x%ld: exit 0 x%ld, 1 x%ld, 2 x%ld\n",
         tries, ng, env_long("MTCS_BYTEFLIP_SEED", 20261123), (long)(time(NULL) - t0), n_ok, n_err,
         n_crash, n_timeout, n_noreport, n_manifest, n_runs, run_rc[0], run_rc[1], run_rc[2]);
  for (int k = 0; k < ng; k++) free(g[k].bytes);
  free(buf);
  if (failures) printf("byteflip: %ld failure(s)\n", failures);
  return failures ? 1 : 0;
}
