/* runner.h - the runner as one include: case results (case.h), backends
 * (backend.h), one case in this process (execute.h) or isolated
 * (isolate.h), whole runs (session.h). */
#ifndef MT_CONF_RUNNER_H
#define MT_CONF_RUNNER_H

#include "backend.h"
#include "case.h"
#include "execute.h"
#include "isolate.h"
#include "session.h"

#endif /* MT_CONF_RUNNER_H */
