#!/usr/bin/env python3
"""machine_load_test.py - perf/machine_load.py's verdicts on hand-made samples, and
its own-thread accounting on a live process. Standard library only.

usage: machine_load_test.py SRC_DIR

Hand-made samples on a 2-core machine (ncpu 2), each with the sampler alone
running in our process (own 1) unless said:
  A: running 1, 1, 1 (others 0): 1 thread -> not disturbed; 2 threads -> not
     oversubscribed (0 + 2 <= 2)
  B: running 2, 2, 1 (others 1, 1, 0; median 1, max 1): 1 thread -> 1 + 1 <= 2, not
     disturbed; 2 threads -> oversubscribed (1 + 2 > 2) and disturbed (median 1 + 2 > 2)
  C: running 3, 3, 3 with own 3 (our two workers spinning): others 0 -> 2 threads
     neither oversubscribed nor disturbed (counted as others before the own field)
  D: steal 0 -> 15 of 100 jiffies -> 15% > 10%: disturbed whatever the threads
"""
import os
import sys
import threading
import time


def main():
    sys.path.insert(0, os.path.join(sys.argv[1], "perf"))
    import machine_load as m
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)
            print("FAIL:", what)

    def smp(running, own=1, steal=0, total=1000):
        return {"t": 0.0, "ncpu": 2, "load1": 0.5, "load5": 0.5, "running": running,
                "own": own, "steal": steal, "total": total}

    a = [smp(1), smp(1), smp(1)]
    for th in (1, 2):
        s = m.summarize(a, th)
        check(not s["disturbed"] and not s["oversubscribed"], f"A threads {th}: {s}")
    b = [smp(2), smp(2), smp(1)]
    s = m.summarize(b, 1)
    check(not s["disturbed"] and s["others_median"] == 1, f"B 1 thread: {s}")
    s = m.summarize(b, 2)
    check(s["disturbed"] and s["oversubscribed"] and "competed" in s["why"], f"B 2: {s}")
    c = [smp(3, own=3)] * 3
    s = m.summarize(c, 2)
    check(not s["disturbed"] and not s["oversubscribed"] and s["others_max"] == 0,
          f"C own threads: {s}")
    d = [smp(1, steal=0, total=1000), smp(1, steal=15, total=1100)]
    s = m.summarize(d, 1)
    check(s["disturbed"] and abs(s["steal_pct"] - 15.0) < 1e-9 and "steal" in s["why"],
          f"D steal: {s}")
    check(m.summarize([], 1)["why"] == "no load samples", "no samples")

    # live: two spinning threads of ours are counted in `own`, so they never look
    # like a neighbour (on Linux; elsewhere own is None and this part is skipped)
    if os.path.isdir("/proc/self/task"):
        stop = []

        def spin():
            while not stop:
                pass
        ts = [threading.Thread(target=spin) for _ in range(2)]
        for t in ts:
            t.start()
        time.sleep(0.1)
        got = [m.sample() for _ in range(5)]
        stop.append(1)
        for t in ts:
            t.join()
        check(max(g["own"] for g in got) >= 2, f"own threads not seen: {got}")
    print("machine_load_test:", "FAIL" if fails else "ok")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
