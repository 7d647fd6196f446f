"""runreport.py - reading the JSON reports of `mtcs run` / `mtcs validate`
(conformance/report.h), and writing what is made of them, shared by
coverage.py and verdicts.py.

Standard library only.
"""
import json
import os
import tempfile


class ReportError(Exception):
    """A report that cannot be read; the message names the file."""


def load(path):
    """The report at path, checked for what every reader needs: an object with
    a "cases" list whose entries have "id" and "status" strings."""
    try:
        with open(path, encoding="utf-8") as f:
            rep = json.load(f)
    except OSError as e:
        raise ReportError("%s: cannot read the report: %s" % (path, e.strerror or e))
    except (ValueError, UnicodeDecodeError) as e:
        raise ReportError("%s: not a JSON report: %s" % (path, e))
    if not isinstance(rep, dict):
        raise ReportError("%s: not an mtcs JSON report (the top level is not an object)" % path)
    if not isinstance(rep.get("cases"), list):
        raise ReportError("%s: not an mtcs JSON report (no \"cases\" list)" % path)
    for k, c in enumerate(rep["cases"]):
        if not isinstance(c, dict):
            raise ReportError("%s: cases[%d] is not an object" % (path, k))
        for field in ("id", "status"):
            if not isinstance(c.get(field), str) or not c[field]:
                raise ReportError("%s: cases[%d] has no \"%s\" string" % (path, k, field))
    return rep


def incomplete_note(rep):
    """'' for a complete run, else why it is not: the report's `incomplete`
    field, whatever its shape (a bool, a count, a string, a list or an object
    of reasons), or `complete: false`."""
    inc = rep.get("incomplete")
    parts = []
    if isinstance(inc, dict):
        if inc.get("incomplete", True) is not False and inc:
            parts = ["%s: %s" % (k, json.dumps(v) if isinstance(v, (list, dict)) else v)
                     for k, v in inc.items() if k != "incomplete"] or ["incomplete"]
    elif isinstance(inc, list) and inc:
        parts = [str(x) for x in inc]
    elif isinstance(inc, str) and inc:
        parts = [inc]
    elif inc is True:
        parts = ["incomplete"]
    elif isinstance(inc, (int, float)) and not isinstance(inc, bool) and inc > 0:
        parts = ["%s cases not executed" % inc]
    if not parts and rep.get("complete") is False:
        parts = ["the run did not complete"]
    return "; ".join(parts)


def write_atomically(items):
    """items: [(path, text)]. Every file is written to a temporary name beside
    its target first, then all are renamed: a failure leaves every target as
    it was and no temporary file. A file keeps the mode of the one it
    replaces; a new one gets 0666 less the umask. ReportError naming the
    file on failure."""
    temps = []
    path = None
    try:
        for path, text in items:
            d = os.path.dirname(os.path.abspath(path))
            fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=d)
            temps.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else 0o666 & ~_umask()
            os.chmod(tmp, mode)
        for tmp, path in temps:
            os.replace(tmp, path)
        temps = []
    except OSError as e:
        raise ReportError("cannot write %s: %s" % (path or "output", e.strerror or e))
    finally:
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m
