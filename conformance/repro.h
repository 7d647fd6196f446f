/* repro.h - repro bundles for failing cases: <dir>/<id>.h5 (the case alone,
 * a one-case golden file) and <dir>/<id>.sh (the command that replays it),
 * and the replay command itself, which the JSON report carries for every
 * failing case (with or without --repro-dir). */
#ifndef MT_CONF_REPRO_H
#define MT_CONF_REPRO_H

#include <stddef.h>

#include "session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The shell command that replays case c read from the golden file `golden`
 * under o's options: absolute paths (mtcs, the golden file, a plugin), so
 * that it runs from anywhere; `--filter '<id>'` when `filter` (a file that
 * holds other cases too); --profile, --level, --torch-version,
 * --exact-version and --poison-runs as the run had them; --no-fork -v.
 * A malloc'd string (free it), NULL when out of memory. */
char *mt_repro_command(const mt_session_opts *o, const char *golden, const mt_golden_case *c,
                       int filter);

/* Writes the bundle into o->repro_dir; `where` gets the script's path, or
 * "" when it could not be written (a warning goes to o->diag); *command
 * (when command is not NULL) the script's replay command (malloc'd) or
 * NULL. */
void mt_repro_write(const mt_session_opts *o, const mt_golden_file *f, const mt_golden_case *c,
                    const mt_case_result *r, char *where, size_t where_len, char **command);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_REPRO_H */
