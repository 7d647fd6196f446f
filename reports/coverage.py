#!/usr/bin/env python3
"""coverage.py - the coverage report of mtcs runs: a JSON matrix and one HTML page.

usage: coverage.py REPORT.json [REPORT.json ...] [--json OUT.json] [--html OUT.html]
                   [--title TEXT] [--quiet]

Reads the JSON reports that `mtcs run --report-json F` (or `mtcs validate`)
wrote, one per run (a backend, a plugin, an adapter), and derives from them
the coverage matrix op x layout x dtype x profile, per run, with the count of
each case status in each cell, and the list of failures with their rules,
messages and the commands that replay them. The report is the one source of
truth: nothing here reads golden files, and the matrix is a pure function of
the reports.

  --json OUT.json   the matrix as JSON (schema: README.md, "Coverage report";
                    format "mtcs-coverage", format_version 1)
  --html OUT.html   one self-contained page (inline CSS, no script, no network):
                    per run and profile a table with ops as rows grouped by
                    family (one row per op and layout), dtypes as columns, each
                    cell the status counts in a colour; a cell with failures
                    links to its failure list, where each failure shows its
                    case id, status, rules, message and repro command (and
                    links to its repro script and one-case golden file when
                    they exist)
  --title TEXT      the page's title (default "mtcs coverage")

A case's layout and dtype are the second and third fields of its id
(`<op>.<layouts>.<dtype>.<variant>`, spec/golden-format.md "Case ids"); an
id without four fields gets layout and dtype "?". Its profile is the case's
`profile` field ("torch" when a report predates it).

Both files are written to temporary names beside their targets and renamed at
the end: a bad input (a missing or malformed report: exit 2, naming the file
and the problem) leaves neither. Standard library only, so CI runs it with the
system python3.
"""
import argparse
import collections
import html
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import runreport  # noqa: E402  (reports/, beside this script)

FORMAT = "mtcs-coverage"
FORMAT_VERSION = 1
EXIT_USAGE = 2

# The runner's case statuses (conformance/case.h) and their summary groups; a
# status this script does not know counts as failed (never hidden as a pass).
STATUS_GROUP = {
    "PASS": "passed", "EXPECTED_DIVERGENCE": "passed", "XFAIL": "passed",
    "FAIL": "failed", "ERROR": "failed", "CRASH": "failed", "TIMEOUT": "failed",
    "XPASS": "failed",
    "NOT_SUPPORTED": "skipped", "SKIP": "skipped",
}
STATUS_ORDER = ("PASS", "FAIL", "ERROR", "NOT_SUPPORTED", "SKIP", "CRASH", "TIMEOUT",
                "EXPECTED_DIVERGENCE", "XFAIL", "XPASS")
DTYPE_ORDER = ("f16", "bf16", "f32", "f64", "i8", "i32", "i64", "u8", "bool", "b", "?")
KIND_RANK = {k: i for i, k in enumerate(
    ("masked", "dense", "scalar", "coo", "csr", "csc", "bsr", "bsc"))}
PROFILE_ORDER = ("torch", "numpy_ma")


def status_group(status):
    return STATUS_GROUP.get(status, "failed")


def split_id(case_id):
    """(layout, dtype) from `<op>.<layouts>.<dtype>.<variant>`; "?" when not of that shape."""
    parts = case_id.split(".")
    if len(parts) != 4 or not all(parts):
        return "?", "?"
    return parts[1], parts[2]


def dtype_key(d):
    return (DTYPE_ORDER.index(d) if d in DTYPE_ORDER else len(DTYPE_ORDER), d)


def layout_key(lay):
    parts = lay.split("_")
    return (len(parts), [KIND_RANK.get(p, len(KIND_RANK)) for p in parts], lay)


def profile_key(p):
    return (PROFILE_ORDER.index(p) if p in PROFILE_ORDER else len(PROFILE_ORDER), p)


# ---- loading -------------------------------------------------------------------

def _str(v, default=""):
    return v if isinstance(v, str) else default


def build(report_paths):
    """The coverage model: a dict in the JSON schema (format mtcs-coverage 1)."""
    runs, cells, failures = [], {}, []
    for r, path in enumerate(report_paths):
        rep = runreport.load(path)
        run_profile = _str(rep.get("profile"), "torch")
        default_profile = run_profile if run_profile != "all" else "torch"
        fam_order, op_order = {}, {}
        for c in rep["cases"]:
            cid, status = c["id"], c["status"]
            op = _str(c.get("op")) or cid.split(".")[0]
            family = _str(c.get("family")) or "unknown"
            profile = _str(c.get("profile")) or default_profile
            layout, dtype = split_id(cid)
            fam_order.setdefault(family, len(fam_order))
            op_order.setdefault(op, len(op_order))
            key = (r, profile, family, op, layout, dtype)
            cell = cells.get(key)
            if cell is None:
                cell = cells[key] = {"counts": collections.Counter(), "failures": [],
                                     "order": (r, profile_key(profile), fam_order[family],
                                               op_order[op], layout_key(layout),
                                               dtype_key(dtype))}
            cell["counts"][status] += 1
            if status_group(status) == "failed":
                cell["failures"].append(cid)
                failures.append({
                    "run": r, "id": cid, "profile": profile, "family": family, "op": op,
                    "layout": layout, "dtype": dtype, "status": status,
                    "rules": _str(c.get("rules")), "message": _str(c.get("message")),
                    "file": c.get("file") if isinstance(c.get("file"), str) else None,
                    "repro_command": _str(c.get("repro_command")) or None,
                    "repro_script": _str(c.get("repro_script")) or None,
                })
        counts = collections.Counter(c["status"] for c in rep["cases"])
        runs.append({
            "run": r, "report": path,
            "backend": _str(rep.get("backend"), "?"),
            "mtcs_version": rep.get("mtcs_version"),
            "profile": run_profile,
            "level": _str(rep.get("level"), "semantic"),
            "require_all": bool(rep.get("require_all")),
            "torch_version": rep.get("torch_version"),
            "complete": rep.get("complete") is not False and not runreport.incomplete_note(rep),
            "incomplete": runreport.incomplete_note(rep) or None,
            "command": _str(rep.get("command")) or None,
            "cases": len(rep["cases"]),
            "passed": sum(n for s, n in counts.items() if status_group(s) == "passed"),
            "failed": sum(n for s, n in counts.items() if status_group(s) == "failed"),
            "skipped": sum(n for s, n in counts.items() if status_group(s) == "skipped"),
        })
    known = list(STATUS_ORDER)
    extra = sorted({s for cell in cells.values() for s in cell["counts"]} - set(known))
    statuses = known + extra
    out_cells = []
    for key in sorted(cells, key=lambda k: cells[k]["order"]):
        r, profile, family, op, layout, dtype = key
        cell = cells[key]
        counts = {s: cell["counts"][s] for s in statuses if cell["counts"][s]}
        groups = collections.Counter()
        for s, n in counts.items():
            groups[status_group(s)] += n
        out_cells.append({
            "run": r, "profile": profile, "family": family, "op": op, "layout": layout,
            "dtype": dtype, "counts": counts, "passed": groups["passed"],
            "failed": groups["failed"], "skipped": groups["skipped"],
            "failures": cell["failures"],
        })
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "statuses": statuses,
            "runs": runs, "cells": out_cells, "failures": failures}


# ---- HTML ----------------------------------------------------------------------

CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:2px solid #ccc}h3{margin-top:1.5em}
code,pre{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12.5px}
pre{background:#f4f4f4;padding:.5em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:left}
table.cov thead th{position:sticky;top:0;background:#eee;z-index:1}
table.cov td.c,table.cov td.t{text-align:center;min-width:3.2em;white-space:nowrap}
table.cov tr.fam th{background:#dde4ee;font-size:1.05em}
table.cov th.op{vertical-align:top;background:#fafafa;font-weight:600}
td.ok{background:#c8e6c9}td.okx{background:#b2dfdb}td.part{background:#fff3c4}
td.skip{background:#e0e0e0;color:#555}td.fail{background:#ffcdd2;font-weight:600}
td.none{color:#bbb}td.t{font-weight:600}
td.c a,td.t a{color:#b00020}
.swatch{display:inline-block;width:1.1em;height:1.1em;vertical-align:middle;
  border:1px solid #999;margin:0 .3em 0 1em}
.failure{border-left:4px solid #e57373;padding:.2em .8em;margin:.6em 0 .6em 1em}
.st{font-weight:700;color:#b00020}.muted{color:#777}
.cellfail{margin-top:1.2em}
"""

LEGEND = (("ok", "every case passed"),
          ("okx", "passed, some as EXPECTED_DIVERGENCE or XFAIL"),
          ("part", "passed where run; some NOT_SUPPORTED or SKIP"),
          ("skip", "nothing ran: NOT_SUPPORTED or SKIP"),
          ("fail", "a failure: FAIL, ERROR, CRASH, TIMEOUT or XPASS (links to the list)"))


class Anchors:
    """HTML ids from keys: readable, [A-Za-z0-9_.-] only, and unique."""

    def __init__(self):
        self.ids, self.used = {}, set()

    def __call__(self, *key):
        if key in self.ids:
            return self.ids[key]
        base = "-".join(re.sub(r"[^A-Za-z0-9_.]", "_", str(p)) for p in key)
        a, n = base, 2
        while a in self.used:
            a, n = "%s_%d" % (base, n), n + 1
        self.used.add(a)
        self.ids[key] = a
        return a


def esc(s):
    return html.escape("" if s is None else str(s), quote=True)


def cell_class(counts):
    groups = collections.Counter()
    for s, n in counts.items():
        groups[status_group(s)] += n
    if not counts:
        return "none"
    if groups["failed"]:
        return "fail"
    if groups["passed"] == 0:
        return "skip"
    if groups["skipped"]:
        return "part"
    if counts.get("EXPECTED_DIVERGENCE") or counts.get("XFAIL"):
        return "okx"
    return "ok"


def cell_text(counts):
    """'12', '3 ✗2', '–4', '2 –1': passed, ✗failed, –skipped."""
    g = collections.Counter()
    for s, n in counts.items():
        g[status_group(s)] += n
    parts = []
    if g["passed"] or not (g["failed"] or g["skipped"]):
        parts.append(str(g["passed"]))
    if g["failed"]:
        parts.append("\u2717%d" % g["failed"])
    if g["skipped"]:
        parts.append("\u2013%d" % g["skipped"])
    return " ".join(parts)


def cell_title(counts):
    return ", ".join("%s %d" % (s, n) for s, n in counts.items())


def rel_link(path, html_dir):
    """A relative href to an existing file, or None."""
    if not path or not os.path.isfile(path):
        return None
    return os.path.relpath(os.path.abspath(path), html_dir)


def render_html(model, html_dir, title, json_out=None):
    A = Anchors()
    runs = model["runs"]
    out = ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<title>%s</title><style>%s</style></head><body>" % (esc(title), CSS),
           "<h1>%s</h1>" % esc(title)]
    total_cases = sum(r["cases"] for r in runs)
    out.append("<p>%d run%s, %d cases, %d failure%s. The matrix is op &times; layout &times; "
               "dtype &times; profile; a layout and a dtype are the second and third fields of "
               "a case id (<code>&lt;op&gt;.&lt;layouts&gt;.&lt;dtype&gt;.&lt;variant&gt;</code>)."
               " A cell shows passed, <b>&#x2717;failed</b> and &ndash;skipped (not supported) "
               "counts; hover for the count of each status.</p>"
               % (len(runs), "" if len(runs) == 1 else "s", total_cases,
                  len(model["failures"]), "" if len(model["failures"]) == 1 else "s"))
    if json_out:
        href = os.path.relpath(os.path.abspath(json_out), html_dir)
        out.append('<p>The same matrix as JSON: <a href="%s">%s</a>.</p>'
                   % (esc(href), esc(os.path.basename(json_out))))
    out.append('<p id="legend">')
    for cls, what in LEGEND:
        out.append('<span class="swatch" style="background:%s"></span>%s'
                   % ({"ok": "#c8e6c9", "okx": "#b2dfdb", "part": "#fff3c4",
                       "skip": "#e0e0e0", "fail": "#ffcdd2"}[cls], esc(what)))
    out.append("</p>")

    # the runs
    out.append('<table class="runs"><thead><tr><th>run</th><th>backend</th><th>profile</th>'
               "<th>level</th><th>cases</th><th>passed</th><th>failed</th><th>skipped</th>"
               "<th>complete</th><th>report</th></tr></thead><tbody>")
    for run in runs:
        rid = A("run", run["run"])
        href = rel_link(run["report"], html_dir)
        rep = ('<a href="%s">%s</a>' % (esc(href), esc(os.path.basename(run["report"])))
               if href else esc(run["report"]))
        out.append('<tr><td><a href="#%s">%d</a></td><td>%s</td><td>%s</td><td>%s%s</td>'
                   "<td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td><td>%s</td></tr>"
                   % (rid, run["run"], esc(run["backend"]), esc(run["profile"]),
                      esc(run["level"]), " (--require-all)" if run["require_all"] else "",
                      run["cases"], run["passed"], run["failed"], run["skipped"],
                      "yes" if run["complete"] else
                      '<span class="st">INCOMPLETE</span> ' + esc(run["incomplete"]), rep))
    out.append("</tbody></table>")

    by_run = collections.defaultdict(list)
    for cell in model["cells"]:
        by_run[cell["run"]].append(cell)
    fails_by_id = {(f["run"], f["id"]): f for f in model["failures"]}
    for run in runs:
        r = run["run"]
        out.append('<section><h2 id="%s">Run %d: %s</h2>' % (A("run", r), r, esc(run["backend"])))
        out.append("<p>profile %s, level %s%s, %d cases; %d passed, %d failed, %d skipped%s.</p>"
                   % (esc(run["profile"]), esc(run["level"]),
                      ", --require-all" if run["require_all"] else "", run["cases"],
                      run["passed"], run["failed"], run["skipped"],
                      "" if run["complete"] else
                      '; <span class="st">INCOMPLETE</span>: ' + esc(run["incomplete"])))
        if run["command"]:
            out.append("<p>Command:</p><pre>%s</pre>" % esc(run["command"]))
        cells = by_run[r]
        profiles = sorted({c["profile"] for c in cells}, key=profile_key)
        for prof in profiles:
            pcells = [c for c in cells if c["profile"] == prof]
            out.extend(render_profile_table(A, r, prof, pcells))
        # the failures, per cell
        fcells = [c for c in cells if c["failures"]]
        if fcells:
            out.append('<h3 id="%s">Failures of run %d</h3>' % (A("failures", r), r))
        for c in fcells:
            out.append('<div class="cellfail" id="%s"><h4>%s &middot; %s &middot; %s '
                       '<span class="muted">(%s, profile %s): %d failure%s</span> '
                       '<a href="#%s">&uarr; table</a></h4>'
                       % (A("fail", r, c["profile"], c["op"], c["layout"], c["dtype"]),
                          esc(c["op"]), esc(c["layout"]), esc(c["dtype"]), esc(c["family"]),
                          esc(c["profile"]), len(c["failures"]),
                          "" if len(c["failures"]) == 1 else "s",
                          A("row", r, c["profile"], c["op"], c["layout"])))
            for cid in c["failures"]:
                out.append(render_failure(A, fails_by_id[(r, cid)], html_dir))
            out.append("</div>")
        out.append("</section>")
    out.append("</body></html>\n")
    return "\n".join(out)


def render_profile_table(A, r, prof, cells):
    out = ['<h3 id="%s">Profile %s</h3>' % (A("profile", r, prof), esc(prof))]
    dtypes = sorted({c["dtype"] for c in cells}, key=dtype_key)
    families = []
    rows = collections.OrderedDict()  # (family, op) -> layout -> dtype -> cell
    for c in cells:
        if c["family"] not in families:
            families.append(c["family"])
        rows.setdefault((c["family"], c["op"]), collections.OrderedDict()).setdefault(
            c["layout"], {})[c["dtype"]] = c
    # the families at a glance
    out.append('<table class="fams"><thead><tr><th>family</th><th>ops</th><th>cases</th>'
               "<th>passed</th><th>failed</th><th>skipped</th></tr></thead><tbody>")
    fam_sum = {}
    for fam in families:
        fc = [c for c in cells if c["family"] == fam]
        s = {k: sum(c[k] for c in fc) for k in ("passed", "failed", "skipped")}
        s["ops"] = len({c["op"] for c in fc})
        fam_sum[fam] = s
        counts = collections.Counter()
        for c in fc:
            counts.update(c["counts"])
        out.append('<tr><td><a href="#%s">%s</a></td><td>%d</td><td class="c %s">%d</td>'
                   "<td>%d</td><td>%d</td><td>%d</td></tr>"
                   % (A("fam", r, prof, fam), esc(fam), s["ops"], cell_class(counts),
                      sum(counts.values()), s["passed"], s["failed"], s["skipped"]))
    out.append("</tbody></table>")
    # the matrix
    ncol = 2 + len(dtypes) + 1
    out.append('<table class="cov"><thead><tr><th>op</th><th>layout</th>%s<th>all</th></tr>'
               "</thead><tbody>" % "".join("<th>%s</th>" % esc(d) for d in dtypes))
    current = None
    for (fam, op), layouts in rows.items():
        if fam != current:
            current = fam
            s = fam_sum[fam]
            out.append('<tr class="fam" id="%s"><th colspan="%d">%s <span class="muted">'
                       "&mdash; %d op%s; %d passed, %d failed, %d skipped</span></th></tr>"
                       % (A("fam", r, prof, fam), ncol, esc(fam), s["ops"],
                          "" if s["ops"] == 1 else "s", s["passed"], s["failed"],
                          s["skipped"]))
        first = True
        for layout, by_dtype in layouts.items():
            tds = []
            if first:
                tds.append('<th class="op" rowspan="%d">%s</th>' % (len(layouts), esc(op)))
                first = False
            tds.append('<td class="lay">%s</td>' % esc(layout))
            total = collections.Counter()
            fail_anchor = None
            for d in dtypes:
                c = by_dtype.get(d)
                if not c:
                    tds.append('<td class="c none">&middot;</td>')
                    continue
                total.update(c["counts"])
                text = esc(cell_text(c["counts"]))
                if c["failures"]:
                    a = A("fail", r, prof, op, layout, d)
                    fail_anchor = fail_anchor or a
                    text = '<a href="#%s">%s</a>' % (a, text)
                tds.append('<td class="c %s" title="%s">%s</td>'
                           % (cell_class(c["counts"]), esc(cell_title(c["counts"])), text))
            ttext = esc(cell_text(total))
            if fail_anchor:
                ttext = '<a href="#%s">%s</a>' % (fail_anchor, ttext)
            tds.append('<td class="t %s" title="%s">%s</td>'
                       % (cell_class(total), esc(cell_title(total)), ttext))
            out.append('<tr class="row" id="%s">%s</tr>'
                       % (A("row", r, prof, op, layout), "".join(tds)))
    out.append("</tbody></table>")
    return out


def render_failure(A, f, html_dir):
    parts = ['<div class="failure" id="%s"><p><span class="st">%s</span> <code>%s</code>'
             ' &nbsp; rules: <b>%s</b></p>'
             % (A("case", f["run"], f["id"]), esc(f["status"]), esc(f["id"]),
                esc(f["rules"] or "-"))]
    if f["message"]:
        parts.append("<pre>%s</pre>" % esc(f["message"]))
    if f["repro_command"]:
        parts.append("<p>Replay:</p><pre>%s</pre>" % esc(f["repro_command"]))
    links = []
    script = f["repro_script"]
    if script:
        href = rel_link(script, html_dir)
        links.append("repro script " + ('<a href="%s" title="%s">%s</a>'
                                        % (esc(href), esc(script), esc(href))
                                        if href else esc(script) + " (not found)"))
        h5 = script[:-3] + ".h5" if script.endswith(".sh") else None
        href = rel_link(h5, html_dir)
        if href:
            links.append('one-case golden <a href="%s" title="%s">%s</a>'
                         % (esc(href), esc(h5), esc(href)))
    if f["file"]:
        links.append("golden file <code>%s</code>" % esc(f["file"]))
    if links:
        parts.append("<p>%s</p>" % " &middot; ".join(links))
    parts.append("</div>")
    return "".join(parts)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="coverage.py",
        description="The coverage report of mtcs runs (op x layout x dtype x profile) from "
                    "their JSON reports: --json (the matrix) and/or --html (one page).",
        epilog="example: build/release/mtcs run --report-json r.json --repro-dir repro/; "
               "reports/coverage.py r.json --html coverage.html --json coverage.json")
    ap.add_argument("reports", nargs="+", metavar="REPORT.json",
                    help="JSON reports of mtcs run / mtcs validate (--report-json)")
    ap.add_argument("--json", dest="json_out", metavar="OUT.json", help="write the matrix")
    ap.add_argument("--html", dest="html_out", metavar="OUT.html", help="write the page")
    ap.add_argument("--title", default="mtcs coverage", help="the page title")
    ap.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else 0
    if not args.json_out and not args.html_out:
        print("coverage.py: nothing to write: give --json OUT.json and/or --html OUT.html",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        model = build(args.reports)
        items = []
        if args.json_out:
            items.append((args.json_out, json.dumps(model, indent=1) + "\n"))
        if args.html_out:
            html_dir = os.path.dirname(os.path.abspath(args.html_out))
            items.append((args.html_out, render_html(model, html_dir, args.title,
                                                     args.json_out)))
        runreport.write_atomically(items)
    except runreport.ReportError as e:
        print("coverage.py: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    if not args.quiet:
        print("coverage: %d run%s, %d cells, %d failure%s -> %s"
              % (len(model["runs"]), "" if len(model["runs"]) == 1 else "s",
                 len(model["cells"]), len(model["failures"]),
                 "" if len(model["failures"]) == 1 else "s",
                 ", ".join(p for p, _ in items)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
