/* repro.h - repro bundles for failing cases: <dir>/<id>.h5 (the case alone,
 * a one-case golden file) and <dir>/<id>.sh (the command that replays it). */
#ifndef MT_CONF_REPRO_H
#define MT_CONF_REPRO_H

#include <stddef.h>

#include "session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the bundle into o->repro_dir; `where` gets the script's path, or
 * "" when it could not be written (a warning goes to o->diag). */
void mt_repro_write(const mt_session_opts *o, const mt_golden_file *f, const mt_golden_case *c,
                    const mt_case_result *r, char *where, size_t where_len);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_REPRO_H */
