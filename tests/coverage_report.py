#!/usr/bin/env python3
"""coverage_report.py - ctest cli.coverage_report: the coverage report of real runs,
rendered by a real browser.

usage: coverage_report.py MTCS SRC BIN

Runs mtcs three times on small filtered sets: a mutant plugin that fails
(mutant_amin_nan_skipping on amin/amax, with --repro-dir, so failures carry
repro scripts), the CPU backend on both profiles, and the example plugin
(most cases NOT_SUPPORTED). Then reports/coverage.py writes the coverage JSON
and the HTML page, and this script checks

  - the JSON against the reports: every case counted once in the cell of its
    id's op, layout and dtype and its profile, the per-status counts equal to
    each report's summary, every failure listed with its replay command (and,
    for the mutant, an existing repro script);
  - bad inputs: a missing or malformed report is exit 2 naming it, and no
    output file is written or replaced;
  - the page in headless Chromium (--dump-dom): the tables are in the DOM with
    one row per op and layout and one cell per dtype column, the failing cells
    are the JSON's, every href="#x" has an element with id x, every relative
    link names an existing file, nothing is loaded from elsewhere, and every
    failure shows its case id, rules, message and replay command. A screenshot
    is left in BIN/coverage_report.work/coverage.png for a person to look at.

Exit 77 (ctest SKIP) when chromium is not installed (.ci/setup.sh installs it).
Standard library only.
"""
import collections
import html.parser
import json
import os
import shutil
import subprocess
import sys
import time

SKIP = 77
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def run(cmd, want_rc=None, timeout=60):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    if want_rc is not None and p.returncode != want_rc:
        failures.append("%s: exit %d, expected %d\n%s%s" % (" ".join(cmd), p.returncode,
                                                            want_rc, p.stdout[-3000:],
                                                            p.stderr[-3000:]))
        print("FAIL: " + failures[-1])
    return p


def find_chromium():
    env = os.environ.get("MTCS_CHROMIUM")
    if env:
        return env if shutil.which(env) else None
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Dom(html.parser.HTMLParser):
    """The elements of a page: (tag, attrs, classes, parent index), the text."""

    VOID = {"meta", "link", "br", "img", "input", "hr", "col", "area", "base", "source", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elems, self.stack, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elems.append({"tag": tag, "attrs": a, "cls": set((a.get("class") or "").split()),
                           "parent": self.stack[-1] if self.stack else None})
        if tag not in self.VOID:
            self.stack.append(len(self.elems) - 1)

    def handle_endtag(self, tag):
        for k in range(len(self.stack) - 1, -1, -1):
            if self.elems[self.stack[k]]["tag"] == tag:
                del self.stack[k:]
                break

    def handle_data(self, data):
        self.text.append(data)

    def ancestors(self, i):
        p = self.elems[i]["parent"]
        while p is not None:
            yield p
            p = self.elems[p]["parent"]


def main():
    if len(sys.argv) != 4:
        print("usage: coverage_report.py MTCS SRC BIN", file=sys.stderr)
        return 2
    mtcs, src, bindir = sys.argv[1:]
    t0 = time.monotonic()
    chromium = find_chromium()
    if not chromium:
        print("SKIP: chromium is not installed (apt-get install chromium; .ci/setup.sh "
              "installs it): the coverage page cannot be checked in a browser")
        return SKIP
    work = os.path.join(bindir, "coverage_report.work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "repro"))
    golden = os.path.join(src, "golden")
    plugins = os.path.join(bindir, "plugins")
    cov = [sys.executable, os.path.join(src, "reports", "coverage.py")]

    # ---- three real runs ----------------------------------------------------------
    mutant_json = os.path.join(work, "mutant.json")
    cpu_json = os.path.join(work, "cpu.json")
    example_json = os.path.join(work, "example.json")
    # amin with NaN skipping (RED-2): fails amin's cases with NaN or poison under the mask
    run([mtcs, "run", "--backend", os.path.join(plugins, "mutant_amin_nan_skipping.so"),
         "--golden", os.path.join(golden, "reduce.h5"), "--filter", "amin.*",
         "--filter", "amax.*", "--report-json", mutant_json,
         "--repro-dir", os.path.join(work, "repro")], want_rc=1)
    run([mtcs, "run", "--golden", os.path.join(golden, "reduce.h5"),
         os.path.join(golden, "numpy_ma.h5"), "--profile", "all", "--filter", "amin.*",
         "--report-json", cpu_json], want_rc=0)
    # the example plugin implements neg and add on masked float32 only
    run([mtcs, "run", "--backend", os.path.join(plugins, "example.so"),
         "--golden", os.path.join(golden, "unary.h5"), "--filter", "neg.*",
         "--report-json", example_json], want_rc=0)
    if failures:
        return 1
    reports = [mutant_json, cpu_json, example_json]
    reps = [json.load(open(p)) for p in reports]

    # ---- the coverage JSON against the reports --------------------------------------
    out_json = os.path.join(work, "coverage.json")
    out_html = os.path.join(work, "coverage.html")
    run(cov + reports + ["--json", out_json, "--html", out_html], want_rc=0)
    model = json.load(open(out_json))
    check(model.get("format") == "mtcs-coverage" and model.get("format_version") == 1,
          "coverage JSON format/format_version: %r/%r" % (model.get("format"),
                                                          model.get("format_version")))
    check(len(model["runs"]) == 3, "3 runs, got %d" % len(model["runs"]))
    for r, rep in enumerate(reps):
        cells = [c for c in model["cells"] if c["run"] == r]
        counts = collections.Counter()
        for c in cells:
            counts.update(c["counts"])
            check(c["passed"] + c["failed"] + c["skipped"] == sum(c["counts"].values()),
                  "cell %r: groups do not add up" % c)
        want = {s: n for s, n in rep["summary"].items() if n}
        check(dict(counts) == want, "run %d: cell counts %r != report summary %r"
              % (r, dict(counts), want))
        check(model["runs"][r]["backend"] == rep["backend"], "run %d: backend" % r)
        # each case in the cell of its id's fields and its profile
        where = {}
        for c in cells:
            for cid in c["failures"]:
                where[cid] = (c["op"], c["layout"], c["dtype"], c["profile"])
        failed = [c for c in rep["cases"]
                  if c["status"] in ("FAIL", "ERROR", "CRASH", "TIMEOUT", "XPASS")]
        for c in failed:
            op, lay, dt, _ = c["id"].split(".")
            check(where.get(c["id"]) == (c["op"], lay, dt, c["profile"]),
                  "run %d: failure %s is in cell %r" % (r, c["id"], where.get(c["id"])))
        fl = [f for f in model["failures"] if f["run"] == r]
        check(sorted(f["id"] for f in fl) == sorted(c["id"] for c in failed),
              "run %d: the failure list is not the report's failures" % r)
        for f in fl:
            check(f["repro_command"] and f["id"] in f["repro_command"] or
                  (f["repro_script"] and f["id"] in f["repro_script"]),
                  "failure %s has no replay command" % f["id"])
    profiles_cpu = {c["profile"] for c in model["cells"] if c["run"] == 1}
    check(profiles_cpu == {"torch", "numpy_ma"}, "cpu run profiles: %r" % profiles_cpu)
    mutant_fails = [f for f in model["failures"] if f["run"] == 0]
    check(len(mutant_fails) >= 5, "the mutant fails >= 5 amin cases, got %d" % len(mutant_fails))
    for f in mutant_fails:
        check(f["op"] == "amin" and "RED-2" in f["rules"].split(","),
              "mutant failure %s blames %s" % (f["id"], f["rules"]))
        check(f["repro_script"] and os.path.isfile(f["repro_script"]),
              "mutant failure %s: repro script %r" % (f["id"], f["repro_script"]))
    check(any(c["skipped"] and c["passed"] for c in model["cells"] if c["run"] == 2) or
          any(c["skipped"] for c in model["cells"] if c["run"] == 2),
          "the example plugin's run has NOT_SUPPORTED cells")
    # the replay command of a failure really replays it: exit 1, the case FAIL
    p = run(["sh", "-c", mutant_fails[0]["repro_command"]], want_rc=1)
    check("FAIL  " + mutant_fails[0]["id"] in p.stdout,
          "replaying %s prints its FAIL line" % mutant_fails[0]["id"])

    # ---- bad inputs: exit 2 naming the file, nothing written --------------------------
    bad = os.path.join(work, "bad.json")
    with open(bad, "w") as f:
        f.write('{"cases": [{"id": "x"}]}')  # a case without a status
    keep = os.path.join(work, "keep.html")
    with open(keep, "w") as f:
        f.write("old")
    for args, needle in (([bad], "bad.json: cases[0] has no \"status\""),
                         ([os.path.join(work, "nope.json")], "nope.json: cannot read"),
                         ([out_html], "coverage.html: not a JSON report")):
        p = run(cov + args + ["--html", keep, "--json", os.path.join(work, "none.json")],
                want_rc=2)
        check(needle in p.stderr, "bad input %s: stderr lacks %r: %s" % (args, needle, p.stderr))
        check(open(keep).read() == "old", "a failed render replaced the page")
        check(not os.path.exists(os.path.join(work, "none.json")), "a failed render wrote JSON")
    check(not [n for n in os.listdir(work) if n.startswith(".keep.html")],
          "temporary files left behind")
    run(cov + [mutant_json], want_rc=2)  # no output named

    # ---- the page in a real browser --------------------------------------------------
    profile_dir = os.path.join(work, "chromium-profile")
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--user-data-dir=" + profile_dir, "--no-first-run", "--disable-extensions"]
    url = "file://" + os.path.abspath(out_html)
    p = run(base + ["--dump-dom", url], want_rc=0, timeout=60)
    if failures:
        return 1
    dom = Dom()
    dom.feed(p.stdout)
    els = dom.elems
    text = "".join(dom.text)
    ids = {e["attrs"]["id"] for e in els if e["attrs"].get("id")}
    check(len(ids) == len([e for e in els if e["attrs"].get("id")]), "duplicate element ids")
    check(any(e["tag"] == "h1" for e in els), "the page has a title (h1)")
    # rows and cells, table by table
    tables = [i for i, e in enumerate(els) if e["tag"] == "table" and "cov" in e["cls"]]
    n_tables = len({(c["run"], c["profile"]) for c in model["cells"]})
    check(len(tables) == n_tables, "%d coverage tables, expected %d" % (len(tables), n_tables))

    def inside(i, t):
        return t in dom.ancestors(i)

    n_rows = 0
    for t in tables:
        heads = [i for i, e in enumerate(els) if e["tag"] == "th" and inside(i, t) and
                 any(els[a]["tag"] == "thead" for a in dom.ancestors(i))]
        ndt = len(heads) - 3  # op, layout, dtypes..., all
        rows = [i for i, e in enumerate(els) if e["tag"] == "tr" and "row" in e["cls"] and
                inside(i, t)]
        n_rows += len(rows)
        for row in rows:
            tds = [i for i, e in enumerate(els) if e["tag"] == "td" and els[i]["parent"] == row]
            nc = sum(1 for i in tds if "c" in els[i]["cls"])
            nt = sum(1 for i in tds if "t" in els[i]["cls"])
            if not check(nc == ndt and nt == 1 and len(tds) == ndt + 2,
                         "row %s: %d dtype cells + %d total in %d tds, expected %d + 1 + layout"
                         % (els[row]["attrs"].get("id"), nc, nt, len(tds), ndt)):
                break
    want_rows = len({(c["run"], c["profile"], c["op"], c["layout"]) for c in model["cells"]})
    check(n_rows == want_rows, "%d table rows, expected %d (one per op and layout)"
          % (n_rows, want_rows))
    fail_cells = [e for i, e in enumerate(els) if e["tag"] == "td" and {"c", "fail"} <= e["cls"]
                  and any(inside(i, t) for t in tables)]
    want_fail = sum(1 for c in model["cells"] if c["failed"])
    check(len(fail_cells) == want_fail, "%d failing cells, expected %d"
          % (len(fail_cells), want_fail))
    for cls in ("ok", "part", "skip"):
        check(any(e["tag"] == "td" and {"c", cls} <= e["cls"] for e in els),
              "no cell of class %s" % cls)
    # links: every #x resolves, every relative file exists, nothing from elsewhere
    html_dir = os.path.dirname(os.path.abspath(out_html))
    n_local = n_files = 0
    for e in els:
        href = e["attrs"].get("href")
        if e["tag"] == "a" and href is not None:
            if href.startswith("#"):
                n_local += 1
                check(href[1:] in ids, "href=%s has no element with that id" % href)
            elif "://" in href or href.startswith("//"):
                check(False, "a link leaves the page's directory: %s" % href)
            else:
                n_files += 1
                check(os.path.isfile(os.path.join(html_dir, href)),
                      "href=%s: no such file" % href)
        check(e["tag"] != "script", "the page has a script")
        for attr in ("src", "srcset"):
            check(attr not in e["attrs"], "<%s %s=...> loads something" % (e["tag"], attr))
        check(not (e["tag"] == "link" and e["attrs"].get("rel") == "stylesheet"),
              "an external stylesheet")
    check(n_local >= want_fail, "only %d in-page links" % n_local)
    check(n_files >= len(mutant_fails), "only %d file links (repro scripts)" % n_files)
    # every failing cell links to its list, which shows each failure in full
    for e in fail_cells:
        i = els.index(e)
        links = [x for x in els if x["tag"] == "a" and x["parent"] == i]
        check(len(links) == 1 and links[0]["attrs"]["href"].startswith("#fail-"),
              "a failing cell without its link to the failure list")
    for f in model["failures"]:
        check(("case-%d-%s" % (f["run"], f["id"])) in ids, "failure %s not on the page" % f["id"])
        for what in (f["id"], f["rules"], f["message"], f["repro_command"]):
            check(what in text, "failure %s: %r not shown" % (f["id"], what[:80]))
    # a screenshot, for a person
    png = os.path.join(work, "coverage.png")
    run(base + ["--window-size=1300,1800", "--screenshot=" + png, url], want_rc=0, timeout=60)
    check(os.path.isfile(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n",
          "no screenshot")

    took = time.monotonic() - t0
    print("coverage report: %d runs, %d cells, %d rows, %d failures, %d in-page and %d file "
          "links checked in Chromium; %.1f s; page %s, screenshot %s"
          % (len(model["runs"]), len(model["cells"]), n_rows, len(model["failures"]), n_local,
             n_files, took, out_html, png))
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
