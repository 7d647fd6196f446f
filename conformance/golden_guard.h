/* golden_guard.h - checks a golden file before the runner parses it, so
 * that no file, however broken, can take the runner down (ERR-5,
 * spec/golden-format.md "Reading a file safely"):
 *
 * 1. MANIFEST: a file taken from the golden directory (not named with
 *    --golden) must be listed in <golden dir>/MANIFEST with its sha256.
 *    A different hash or a missing line is an input error. A golden
 *    directory without a MANIFEST (a third party's files) is not checked:
 *    MT_OK with a warning in err->msg.
 * 2. A parse in a child process: a forked child opens the file and reads
 *    every case header and every case body (mt_golden_open, mt_golden_load)
 *    and reports through a pipe. A child killed by a signal (libhdf5 has
 *    crashes on corrupt files: H5HG_read under H5Aread, ...) or still running
 *    after the timeout becomes INVALID_FORMAT "<file>: corrupt file (...)".
 *    Skipped for a file a MANIFEST vouches for: its sha256 is the one
 *    listed, in the golden directory's MANIFEST (a file of that directory)
 *    or in the MANIFEST beside it (a file named with --golden, which is no
 *    error when it does not vouch). Those bytes are the generator's, which
 *    CI reads in process; MTCS_CHECK_PARSE=always parses every file. */
#ifndef MT_CONF_GOLDEN_GUARD_H
#define MT_CONF_GOLDEN_GUARD_H

#include "mt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How long the child may take to read one file (seconds); MTCS_CHECK_TIMEOUT
 * overrides it. The largest committed goldens take about 1.5 s each
 * (unary.h5, numpy_ma.h5; 2026-12-02, a 2-core VM). */
#define MT_GOLDEN_CHECK_TIMEOUT_S 60.0

/* 1 then 2 (unless vouched for) on path. from_golden_dir: path came from
 * listing golden_dir (not from --golden). Returns MT_OK when the runner may open the file;
 * err->msg is then "" or a warning to print (no MANIFEST in golden_dir).
 * Otherwise INVALID_FORMAT / IO_ERROR / OUT_OF_MEMORY with a message that
 * names the file. Never prints; never exits; safe to call for each file. */
mt_status mt_golden_check(const char *path, int from_golden_dir, const char *golden_dir,
                          mt_error *err);

/* 1 alone: path's sha256 against <golden_dir>/MANIFEST (the line of path's
 * basename). *checked = 0 when golden_dir has no MANIFEST (MT_OK). */
mt_status mt_golden_manifest_check(const char *path, const char *golden_dir, int *checked,
                                   mt_error *err);

/* 2 alone, with a timeout in seconds (<= 0: MT_GOLDEN_CHECK_TIMEOUT_S).
 * *crashed (may be NULL) = the signal that killed the child, -1 for a
 * timeout, 0 otherwise. *n_cases (may be NULL) = the cases read. */
mt_status mt_golden_parse_isolated(const char *path, double timeout_s, int *crashed, int *n_cases,
                                   mt_error *err);

/* Any reader of an untrusted HDF5 file, run the same way: parse(path,
 * &count, err) in a forked child under timeout_s; a child killed by a
 * signal, still running at the deadline (limit_hint names what sets the
 * limit) or ending without a report is INVALID_FORMAT "<path>: corrupt
 * file (...)"; else the child's own status and message. *crashed and
 * *count as for mt_golden_parse_isolated. Adapter responses use it. */
typedef mt_status (*mt_file_parse_fn)(const char *path, int *count, mt_error *err);
mt_status mt_parse_isolated(const char *path, mt_file_parse_fn parse, double timeout_s,
                            const char *limit_hint, int *crashed, int *count, mt_error *err);

/* 2 in this process, for the fuzzer and for --no-fork debugging: open,
 * load every case, close. */
mt_status mt_golden_parse_all(const char *path, int *n_cases, mt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_GOLDEN_GUARD_H */
