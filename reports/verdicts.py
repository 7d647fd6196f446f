#!/usr/bin/env python3
"""verdicts.py - the README's Verdicts section from JSON reports of adapter runs.

usage: verdicts.py REPORT.json [REPORT.json ...] [--readme README.md] [--out FILE.md]

Each REPORT.json is what `mtcs validate --adapter CMD --report-json F` (or
`mtcs run --backend B --report-json F`) wrote for one library: its backend
name ("<library> <version>" for an adapter), profile, level, command line and
cases. The section has

  - one summary table, a row per report: library, profile, level, the counts
    below over all families, and a verdict (passes every case / N of M
    executed cases fail / nothing executed / INCOMPLETE and why);
  - per report: how to reproduce the run (its command line, without its
    report options), a table per family, and the rules the library breaks:
    rule id, failing cases, one example case and the command that replays it.

Counts, from the case statuses (conformance/case.h):
  passed         PASS, XPASS (an --expect entry expected a failure: it passed)
  failed         FAIL, XFAIL (a failure an --expect file knew of is still one)
  errors         ERROR (an unexpected refusal, or an adapter protocol error)
  crashes        CRASH, TIMEOUT
  not supported  NOT_SUPPORTED, SKIP
  divergent      EXPECTED_DIVERGENCE (matches another recorded torch version)
(a status this script does not know counts as an error, never as a pass).
Rules broken: the FAIL, XFAIL and ERROR cases, each counted under every rule
its `rules` field names (the runner blames MASK-9 or CALL-1 alone when its own
checks fail), most failing cases first.

Output: --readme FILE replaces what lies between the lines
`<!-- verdicts:begin -->` and `<!-- verdicts:end -->` of FILE (each must be
there once, in that order); --out FILE writes the section alone; neither:
the section on stdout. Files are written to a temporary name and renamed. A
missing or malformed report, or a README without the markers, is exit 2
naming the file and the problem, and nothing is written. Missing report
fields (older reports, a runner without `command` or `incomplete`) are shown
as unknown, never guessed. Standard library only.
"""
import argparse
import collections
import os
import re
import shlex
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import runreport  # noqa: E402  (reports/, beside this script)

EXIT_USAGE = 2
BEGIN = "<!-- verdicts:begin -->"
END = "<!-- verdicts:end -->"

COLUMNS = (("passed", ("PASS", "XPASS")),
           ("failed", ("FAIL", "XFAIL")),
           ("errors", ("ERROR",)),
           ("crashes", ("CRASH", "TIMEOUT")),
           ("not supported", ("NOT_SUPPORTED", "SKIP")),
           ("divergent", ("EXPECTED_DIVERGENCE",)))
COLUMN_OF = {s: name for name, ss in COLUMNS for s in ss}
RULE_BREAKING = ("FAIL", "XFAIL", "ERROR")
EXECUTED = ("PASS", "FAIL", "ERROR", "CRASH", "TIMEOUT", "EXPECTED_DIVERGENCE", "XFAIL", "XPASS")
# options of a run that only say where its reports go, or which cases it runs
DROP_WITH_VALUE = ("--filter", "--report-json", "--junit", "--repro-dir", "--expect")
# (--filter only where a case replaces it)
DROP_ALONE = ("-v", "--verbose")


class VerdictError(Exception):
    pass


# ---- loading -------------------------------------------------------------------

def _s(v, default=None):
    return v if isinstance(v, str) and v else default


def reproduce_command(command, case_id=None):
    """The run's command line without the options that name its outputs
    (--report-json, --junit, --repro-dir, --expect, -v); with a case named,
    its --filter options replaced by --filter CASE. None when the report has
    no command line."""
    if not command:
        return None
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        drop = [o for o in DROP_WITH_VALUE if o != "--filter" or case_id]
        if a in drop:
            skip = True
            continue
        if a in DROP_ALONE or any(a.startswith(o + "=") for o in drop):
            continue
        out.append(a)
    if case_id:
        out += ["--filter", case_id]
    return " ".join(shlex.quote(a) for a in out)


class Verdict:
    """One report, summed up."""

    def __init__(self, path, rep):
        self.path = path
        self.name = _s(rep.get("backend"), "(unnamed backend)")
        self.profile = _s(rep.get("profile"), "unknown")
        self.level = _s(rep.get("level"), "unknown")
        self.command = _s(rep.get("command"))
        self.incomplete = runreport.incomplete_note(rep)
        self.families = collections.OrderedDict()  # family -> Counter of columns
        self.total = collections.Counter()
        self.executed = 0
        rules = collections.OrderedDict()  # rule -> [case ids]
        self.example = {}
        for c in rep["cases"]:
            col = COLUMN_OF.get(c["status"], "errors")  # an unknown status is never a pass
            fam = _s(c.get("family"), "unknown")
            self.families.setdefault(fam, collections.Counter())[col] += 1
            self.total[col] += 1
            self.executed += c["status"] in EXECUTED
            if c["status"] in RULE_BREAKING:
                for r in (_s(c.get("rules"), "") or "").split(","):
                    r = r.strip() or "(no rule)"
                    rules.setdefault(r, []).append(c)
        self.rules = sorted(rules.items(), key=lambda kv: (-len(kv[1]), kv[0]))

    @property
    def bad(self):
        return self.total["failed"] + self.total["errors"] + self.total["crashes"]

    def verdict(self):
        if self.executed == 0:
            v = "nothing executed"
        elif self.bad:
            v = "%d of %d executed cases fail" % (self.bad, self.executed)
        elif self.total["not supported"]:
            v = "passes every case it runs (%d not supported)" % self.total["not supported"]
        else:
            v = "passes every case"
        return "INCOMPLETE (%s); %s" % (self.incomplete, v) if self.incomplete else v


# ---- Markdown ------------------------------------------------------------------

def cell(s):
    """A table cell: GFM splits cells on every unescaped |, code spans included."""
    return str(s).replace("|", "\\|").replace("\n", " ")


def code(s):
    """s as a Markdown code span (a fence longer than any backtick run in it)."""
    s = str(s).replace("\n", " ")
    runs = [len(m) for m in re.findall(r"`+", s)]
    fence = "`" * (max(runs) + 1 if runs else 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return "%s%s%s%s%s" % (fence, pad, s, pad, fence)


def table(header, rows, numeric=()):
    """A Markdown table; the columns whose indexes are in `numeric` right-aligned."""
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---:" if k in numeric else "---" for k in range(len(header))) + "|"]
    out += ["| " + " | ".join(cell(x) for x in r) + " |" for r in rows]
    return out


def render(verdicts):
    cols = [name for name, _ in COLUMNS]
    out = ["_Generated by `reports/verdicts.py` from the JSON reports of %d run%s; "
           "regenerate, do not edit._" % (len(verdicts), "" if len(verdicts) == 1 else "s"), ""]
    out += table(["library", "profile", "level"] + cols + ["verdict"],
                 [[v.name, v.profile, v.level] + [v.total[c] for c in cols] + [v.verdict()]
                  for v in verdicts], numeric=range(3, 3 + len(cols)))
    out += ["", "Columns (case statuses): " +
            ", ".join("%s (%s)" % (name, ", ".join(ss)) for name, ss in COLUMNS) + "."]
    for v in verdicts:
        out += ["", "### %s (profile %s)" % (v.name, v.profile), ""]
        if v.incomplete:
            out += ["**INCOMPLETE**: %s." % v.incomplete, ""]
        repro = reproduce_command(v.command)
        if repro:
            out += ["Reproduce:", "", "    " + repro, ""]
        else:
            out += ["Reproduce: the report does not record its command line.", ""]
        rows = [[fam] + [cnt[c] for c in cols] for fam, cnt in v.families.items()]
        rows.append(["**all**"] + ["**%d**" % v.total[c] for c in cols])
        out += table(["family"] + cols, rows, numeric=range(1, 1 + len(cols)))
        out.append("")
        if not v.rules:
            out.append("Rules broken: none%s." % (
                "" if v.executed else " (nothing executed)"))
            continue
        out += ["Rules broken (FAIL, XFAIL and ERROR cases; a case counts under each rule it "
                "checks):", ""]
        rrows = []
        for rule, cases in v.rules:
            ex = cases[0]
            cmd = reproduce_command(v.command, ex["id"]) or _s(ex.get("repro_command"))
            rrows.append([rule, len(cases), code(ex["id"]), code(cmd) if cmd else "-"])
        out += table(["rule", "failing cases", "example", "reproduce"], rrows, numeric=(1,))
    return "\n".join(out) + "\n"


def replace_block(text, section, path):
    b, e = text.count(BEGIN), text.count(END)
    if b != 1 or e != 1:
        raise VerdictError("%s: needs the lines %s and %s once each (found %d and %d)"
                           % (path, BEGIN, END, b, e))
    i, j = text.index(BEGIN), text.index(END)
    if j < i:
        raise VerdictError("%s: %s comes before %s" % (path, END, BEGIN))
    return text[:i + len(BEGIN)] + "\n" + section + text[j:]


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="verdicts.py",
        description="The README's Verdicts section from JSON reports of adapter runs "
                    "(mtcs validate --report-json).",
        epilog="example: reports/verdicts.py numpy_ma.json torch_masked.json "
               "scipy_sparse.json --readme README.md")
    ap.add_argument("reports", nargs="+", metavar="REPORT.json")
    ap.add_argument("--readme", metavar="README.md",
                    help="replace the block between %s and %s" % (BEGIN, END))
    ap.add_argument("--out", metavar="FILE.md", help="write the section alone")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else 0
    try:
        verdicts = [Verdict(p, runreport.load(p)) for p in args.reports]
        section = render(verdicts)
        readme = None
        if args.readme:
            try:
                with open(args.readme, encoding="utf-8") as f:
                    readme = replace_block(f.read(), section, args.readme)
            except OSError as e:
                raise VerdictError("%s: cannot read: %s" % (args.readme, e.strerror or e))
        runreport.write_atomically(([(args.out, section)] if args.out else [])
                                   + ([(args.readme, readme)] if readme is not None else []))
    except (VerdictError, runreport.ReportError) as e:
        print("verdicts.py: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    if not args.readme and not args.out:
        sys.stdout.write(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
