/* adapter.h - the runner side of the adapter protocol (spec/adapter-protocol.md,
 * protocol 1): an implementation in another process (a Python library, a
 * library behind another runtime), started once by `mtcs validate --adapter
 * "<command>"` and sent one request per golden case and per poison re-run.
 *
 * The adapter runs as `/bin/sh -c "<command>"` in its own process group, in
 * mtcs's working directory, with stdin and stdout pipes to mtcs and its
 * stderr forwarded to o->diag line by line, prefixed "adapter: ". Request
 * and response files live in a temporary directory made for the run
 * ($MTCS_ADAPTER_DIR in the adapter's environment; removed at the end).
 *
 * Each request has a deadline (case_timeout_s). An adapter that exits or
 * closes stdout before answering is CRASH, one that does not answer in time
 * is TIMEOUT (killed), one that answers something that is not a protocol
 * line is ERROR "adapter protocol: ..." (killed: the stream cannot be
 * trusted); each is restarted (a new handshake) before the next request.
 * Three failed starts in a row and no more requests are sent: the cases
 * left are not run (MT_CS_SKIP, "not run: ..."). Each of these requests
 * is a *loss* (mt_adapter_losses): a run with one is INCOMPLETE. A
 * response file that cannot be read (missing, not HDF5, a malformed
 * output) is ERROR naming the file and the problem: a verdict on the
 * implementation, not a loss (the adapter is kept). */
#ifndef MT_CONF_ADAPTER_H
#define MT_CONF_ADAPTER_H

#include <stddef.h>
#include <stdio.h>

#include "execute.h"
#include "jsonline.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MT_ADAPTER_PROTOCOL 1
/* The longest line either side may send, its '\n' included. */
#define MT_ADAPTER_LINE_MAX (64 * 1024)
/* Failed starts in a row after which no more requests are sent. */
#define MT_ADAPTER_MAX_FAILED_STARTS 3
/* How long an adapter may take to exit after its stdin is closed. */
#define MT_ADAPTER_EXIT_GRACE_S 5.0
#define MT_ADAPTER_HELLO_TIMEOUT_S 120.0
#define MT_ADAPTER_CASE_TIMEOUT_S 30.0

typedef struct mt_adapter_opts {
  const char *command;    /* run with /bin/sh -c */
  double hello_timeout_s; /* <= 0: MT_ADAPTER_HELLO_TIMEOUT_S */
  double case_timeout_s;  /* <= 0: MT_ADAPTER_CASE_TIMEOUT_S */
  FILE *diag;             /* the adapter's stderr goes here, prefixed; NULL: stderr */
  int clear_line;         /* diag is a terminal with a progress line: clear it first */
} mt_adapter_opts;

typedef struct mt_adapter mt_adapter;

/* Makes the temporary directory, starts the adapter and does the handshake
 * (one try). MT_OK: *out is ready. Otherwise INVALID_ARGUMENT (a hello
 * that is missing, late, malformed or of another protocol version; an
 * adapter that exits first), IO_ERROR or OUT_OF_MEMORY, with err naming the
 * reason; *out is NULL and nothing is left running. Ignores SIGPIPE until
 * mt_adapter_close (a write to a dead adapter must not kill mtcs). */
mt_status mt_adapter_open(const mt_adapter_opts *o, mt_adapter **out, mt_error *err);
/* Closes the adapter's stdin, gives it MT_ADAPTER_EXIT_GRACE_S to exit,
 * kills its process group, removes the temporary directory. NULL is fine. */
void mt_adapter_close(mt_adapter *a);

/* Ends the adapter process the way mt_adapter_close does, keeping the
 * record (name, losses) for the reports; a later request starts it again. */
void mt_adapter_stop(mt_adapter *a);

/* "<name> <version>" from the hello (the backend name of reports). */
const char *mt_adapter_name(const mt_adapter *a);
/* The profiles the hello lists, comma-separated ("numpy_ma, torch"). */
const char *mt_adapter_profiles(const mt_adapter *a);
/* Whether the hello lists profile p. */
int mt_adapter_has_profile(const mt_adapter *a, const char *p);
/* The invoker for mt_exec_opts (execute.h): one request per call. */
const mt_invoker *mt_adapter_invoker(mt_adapter *a);

/* Requests that got no verdict so far (CRASH, TIMEOUT, protocol ERROR, a
 * request not sent); each has a reason,
 * "<case id> (<run>): <STATUS>: <why>". */
int mt_adapter_losses(const mt_adapter *a);
const char *mt_adapter_loss(const mt_adapter *a, int k);
/* Nonzero once MT_ADAPTER_MAX_FAILED_STARTS starts in a row failed: no
 * more requests are sent. *why (may be NULL) = the last start's reason. */
int mt_adapter_gave_up(const mt_adapter *a, const char **why);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_ADAPTER_H */
