"""machine_load.py - what else the machine was doing while we measured.

The machines here are shared: a neighbour's load comes and goes within seconds.
Every benchmark phase (the C run, each peer duel) records samples of the
machine's load at its start, between its repetitions and at its end, and a
phase that ran beside a neighbour is reported as disturbed instead of being
judged against a target.

A sample (sample()) is a dict:
  t              time.time()
  load1, load5   /proc/loadavg (1- and 5-minute averages; they lag by design)
  running        /proc/stat procs_running at that instant, INCLUDING the
                 sampling process itself (so 1 on an idle machine)
  own            this process's threads that were runnable at that instant
                 (/proc/self/task/*/stat state R), the sampler's own included:
                 an OpenMP or torch worker still spinning after its last
                 parallel region is ours, not a neighbour
  steal, total   cumulative jiffies of the aggregate cpu line (steal: time a
                 hypervisor gave our vCPUs to another guest)
  ncpu           os.cpu_count()

summarize(samples, threads) condenses a phase's samples into the facts the
report shows and the verdict it acts on:
  others_max, others_median
                 runnable tasks other than this process's at the sample instants
                 (running - own, or running - 1 without /proc/self/task): a
                 neighbour that wants a core
  steal_pct      steal share of all CPU time between the first and last sample
  load1_start, load1_end
  oversubscribed others_max + threads > ncpu: a multi-threaded row (cpuN) had
                 fewer free cores than threads at some instant
  disturbed      others_median + threads > ncpu or steal_pct > STEAL_LIMIT:
                 for a typical instant of the phase, a neighbour competed for
                 our cores (or the hypervisor took them)
  why            a sentence saying which of these held, '' when none

Only the standard library; works (with 'unknown' facts) where /proc is absent.
"""
import os
import statistics
import time

STEAL_LIMIT = 10.0  # percent of CPU time stolen over a phase that disturbs it


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _own_running():
    """Threads of this process in state R (runnable), or None without /proc."""
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return None
    n = 0
    for tid in tids:
        st = _read(f"/proc/self/task/{tid}/stat")
        # the state follows the parenthesised command name, which may hold spaces
        rest = st[st.rfind(")") + 1:].split()
        if rest and rest[0] == "R":
            n += 1
    return max(n, 1)  # the sampler itself is running


def sample():
    s = {"t": time.time(), "ncpu": os.cpu_count() or 1, "load1": None, "load5": None,
         "running": None, "own": _own_running(), "steal": None, "total": None}
    la = _read("/proc/loadavg").split()
    if len(la) >= 2:
        s["load1"], s["load5"] = float(la[0]), float(la[1])
    for line in _read("/proc/stat").splitlines():
        f = line.split()
        if f and f[0] == "cpu" and len(f) >= 9:
            vals = [int(x) for x in f[1:]]
            s["total"] = sum(vals[:8])  # user..steal (guest time is inside user)
            s["steal"] = vals[7]
        elif f and f[0] == "procs_running" and len(f) == 2:
            s["running"] = int(f[1])
    return s


def summarize(samples, threads):
    """The phase's load facts and verdict (see the module docstring)."""
    samples = [s for s in samples if s]
    out = {"samples": len(samples), "threads": threads, "ncpu": None, "others_max": None,
           "others_median": None, "steal_pct": None, "load1_start": None, "load1_end": None,
           "oversubscribed": False, "disturbed": False, "why": ""}
    if not samples:
        out["why"] = "no load samples"
        return out
    ncpu = samples[0]["ncpu"]
    out["ncpu"] = ncpu
    out["load1_start"], out["load1_end"] = samples[0]["load1"], samples[-1]["load1"]
    others = [max(0, s["running"] - (s.get("own") or 1)) for s in samples
              if s["running"] is not None]
    if others:
        out["others_max"] = max(others)
        out["others_median"] = statistics.median(others)
    a, b = samples[0], samples[-1]
    if a["total"] is not None and b["total"] is not None and b["total"] > a["total"]:
        out["steal_pct"] = 100.0 * (b["steal"] - a["steal"]) / (b["total"] - a["total"])
    why = []
    if others and out["others_max"] + threads > ncpu:
        out["oversubscribed"] = True
        if threads > 1:
            why.append(f"oversubscribed: up to {out['others_max']} other runnable task(s) "
                       f"beside our {threads} threads on {ncpu} cores")
    if others and out["others_median"] + threads > ncpu:
        out["disturbed"] = True
        why.append(f"a neighbour competed for the cores (median {out['others_median']:g} "
                   f"other runnable task(s), {threads} thread(s), {ncpu} cores)")
    if out["steal_pct"] is not None and out["steal_pct"] > STEAL_LIMIT:
        out["disturbed"] = True
        why.append(f"CPU steal {out['steal_pct']:.0f}% > {STEAL_LIMIT:g}%")
    out["why"] = "; ".join(why)
    return out


def describe(summary):
    """One line for progress output and reports."""
    s = summary
    if not s.get("samples"):
        return "load: unknown"
    parts = [f"load1 {s['load1_start']}->{s['load1_end']}"]
    if s["others_median"] is not None:
        parts.append(f"other runnable {s['others_median']:g} (max {s['others_max']})")
    if s["steal_pct"] is not None:
        parts.append(f"steal {s['steal_pct']:.1f}%")
    if s["disturbed"] or s["oversubscribed"]:
        parts.append("DISTURBED" if s["disturbed"] else "oversubscribed")
    return "load: " + ", ".join(parts)
