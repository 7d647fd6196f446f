#!/usr/bin/env python3
"""duel_selftest.py - ctest perf.duel_selftest: duel.py and cstep.py do what they claim.

  1. with the pure-numpy reference peer (numpy_ref: ADA-1/ADA-2 in numpy, every
     operation rounded to the dtype), every duel verifies bit-exact and
     duel.json is valid: >= 5 reps per duel, each with positive times and
     steps, median/min/max consistent, a load summary, the context's fields;
  2. deliberately wrong peers (this file's PEERS, given to duel.py with
     --peer-file): one element off by 1 ulp, and lr doubled. duel.py must exit
     1 after writing duel.json, with an error row that names the duel and the
     first differing element (the ulp peer: exactly the element it changed);
  3. cstep rejects a wrong dtype, a short array, a non-contiguous array and an
     index out of range with a ValueError naming the argument, and the
     library itself answers a NULL pointer with status 4 and a message.

usage: duel_selftest.py --steps-lib build/<preset>/perf/kernels/libmtcs_steps.so
Exit 0 pass, 1 fail.
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import duel  # noqa: E402  (also what --peer-file loads this file's peers from)

ULP_ELEMENT = 3  # the wrong peer changes param at the 4th gradient entry's first element


class NumpyUlpOff(duel.NumpyRef):
    """numpy_ref, then param one ulp up at one updated element (first step only)."""
    name = "numpy_ulp_off"
    c_paths = ("sparse_coo",)

    def __init__(self, cfg, data):
        super().__init__(cfg, data)
        self.k = int(data["idx"][ULP_ELEMENT]) * cfg["dim"]
        self.first = True

    def step(self):
        super().step()
        if self.first:
            x = self.p[self.k]  # nextafter in the dtype (a Python inf would make it float64)
            self.p[self.k] = np.nextafter(x, x.dtype.type(np.inf))
            self.first = False


class NumpyLrDoubled(duel.NumpyRef):
    """numpy_ref with lr doubled: every updated element differs."""
    name = "numpy_lr_doubled"
    c_paths = ("dense", "hybrid_coo")

    def __init__(self, cfg, data):
        super().__init__(dict(cfg, lr=2 * cfg["lr"]), data)


class NumpyRowwise:
    """A fake of fbgemm_rowwise's shape (same_math False): one state value per row,
    h += mean(g*g); p += g * (-lr / (sqrt(h) + eps)); checked against its own
    reference() applied to what result() gave before the first step."""
    name = "numpy_rowwise"
    same_math = False
    c_paths = ("hybrid_coo",)
    dtypes = ("f32",)

    def __init__(self, cfg, data):
        self.D, self.lr, self.eps = cfg["dim"], cfg["lr"], cfg["eps"]
        self.p = data["param"].copy()
        self.h = np.ascontiguousarray(data["state"].reshape(-1, self.D)[:, 0])
        self.idx, self.g = data["idx"], data["vals"].reshape(-1, self.D)

    def reference(self, param, state):
        f = np.float32
        p2, h = param.copy().reshape(-1, self.D), state.copy()
        h[self.idx] = h[self.idx] + (self.g * self.g).mean(axis=1, dtype=f)
        mult = f(-self.lr) / (np.sqrt(h[self.idx]) + f(self.eps))
        p2[self.idx] = p2[self.idx] + self.g * mult[:, None]
        return p2.reshape(-1), h

    def step(self):
        self.p, self.h = self.reference(self.p, self.h)

    def result(self):
        return self.p.copy(), self.h.copy()


class NumpyRowwiseOff(NumpyRowwise):
    """The same, its step 1% too large: its own formula must catch it."""
    name = "numpy_rowwise_off"

    def step(self):
        p0 = self.p.copy()
        super().step()
        self.p = p0 + (self.p - p0) * np.float32(1.01)


PEERS = [NumpyUlpOff, NumpyLrDoubled, NumpyRowwise, NumpyRowwiseOff]

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def run_duel(lib, out, *args):
    cmd = [sys.executable, os.path.join(HERE, "duel.py"), "--steps-lib", lib, "--out", out,
           "--sizes", "64K", "--devs", "cpu1", "--reps", "5", "--round-time", "0.01", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    sys.stdout.write("".join("  | " + line + "\n" for line in r.stderr.splitlines()[-12:]))
    return r.returncode


def test_numpy_ref(lib, tmp):
    out = os.path.join(tmp, "ok.json")
    rc = run_duel(lib, out, "--peers", "numpy_ref", "--densities", "1,10", "--dims", "1,64",
                  "--dtypes", "f32,f64")
    check(rc == 0, f"numpy_ref duels exit 0 (got {rc})")
    try:
        with open(out) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        check(False, f"duel.json readable: {e}")
        return
    ctx, rows = doc.get("context", {}), doc.get("duels", [])
    for k in ("date", "host", "ncpu", "python", "torch", "fbgemm", "steps_lib", "isa", "mode",
              "phases"):
        check(k in ctx, f"context has {k}")
    check(ctx.get("isa") in ("avx512", "avx2", "base"), f"context isa {ctx.get('isa')!r}")
    check(bool(ctx.get("phases")) and all("load" in p and "start" in p and "end" in p
                                          for p in ctx["phases"]), "phases with load samples")
    # dense (dim 1) + sparse_coo x 2 densities + hybrid_coo x 2 densities, x 2 dtypes
    check(len(rows) == 10, f"10 duels (dense, sparse_coo x2, hybrid_coo x2; f32, f64): "
          f"got {len(rows)}")
    for r in rows:
        nm = r.get("name", "?")
        check(r.get("error") is None, f"{nm}: no error ({r.get('error')})")
        check(r.get("verified") == "bit-exact", f"{nm}: verified bit-exact "
              f"({r.get('verified')})")
        reps = r.get("reps") or []
        check(len(reps) >= 5, f"{nm}: >= 5 reps ({len(reps)})")
        check(all(x["c_ns"] > 0 and x["peer_ns"] > 0 and x["c_steps"] >= 3 and
                  x["peer_steps"] >= 3 and abs(x["ratio"] - x["peer_ns"] / x["c_ns"]) < 1e-9 *
                  x["ratio"] for x in reps), f"{nm}: reps have times, >= 3 steps a side, "
              "ratio = peer/C")
        for k in ("c_ns", "peer_ns", "ratio"):
            s = r.get(k) or {}
            vals = sorted(x[k] for x in reps)
            check(s.get("min") == vals[0] and s.get("max") == vals[-1] and
                  vals[0] <= s.get("median", -1) <= vals[-1], f"{nm}: {k} median/min/max")
        ld = r.get("load") or {}
        check(ld.get("samples") == len(reps) + 1 and "disturbed" in ld,
              f"{nm}: load summary over reps + 1 samples")
        want_nnz = max(1, round(r["n"] // r["dim"] * r["density"] / 100))
        check(r.get("nnz") == want_nnz, f"{nm}: nnz {r.get('nnz')} = round(rows*density%)")
        check(r.get("c_path") in duel.C_PATHS and r.get("same_math") is True,
              f"{nm}: c_path and same_math")


def test_wrong_peers(lib, tmp):
    out = os.path.join(tmp, "bad.json")
    rc = run_duel(lib, out, "--peer-file", os.path.abspath(__file__), "--peers",
                  "numpy_ulp_off,numpy_lr_doubled", "--densities", "1", "--dims", "1,64",
                  "--dtypes", "f32")
    check(rc == 1, f"wrong peers: duel.py exits 1 (got {rc})")
    try:
        with open(out) as f:
            rows = json.load(f)["duels"]
    except (OSError, ValueError, KeyError) as e:
        check(False, f"duel.json written despite the mismatch: {e}")
        return
    names = sorted(r["name"] for r in rows)
    check(len(rows) == 3, f"3 wrong duels (ulp: sparse_coo; lr: dense, hybrid_coo): {names}")
    for r in rows:
        err = r.get("error") or ""
        check(err.startswith(r["name"] + ": verification failed"),
              f"{r['name']}: error row names the duel ({err[:80]!r})")
        check(not r.get("reps") and r.get("ratio") is None, f"{r['name']}: not timed")
        if r["peer"] == "numpy_ulp_off":
            # the data of the duel: element idx[ULP_ELEMENT] of the same seed
            data, _ = duel.make_data(r["n"], 1, r["density"], r["dtype"], 15, False)
            k = int(data["idx"][ULP_ELEMENT])
            check(f"param[{k}] = " in err and "1 element(s) differ" in err,
                  f"ulp peer: names param[{k}], the one element it changed ({err[:160]!r})")
        else:
            check("param[" in err and "bit-exact required" in err,
                  f"lr peer: names the first differing param element ({err[:160]!r})")


def test_other_math(lib, tmp):
    """A same_math False peer is checked against its own formula, not the C step."""
    out = os.path.join(tmp, "rowwise.json")
    rc = run_duel(lib, out, "--peer-file", os.path.abspath(__file__), "--peers",
                  "numpy_rowwise,numpy_rowwise_off", "--densities", "1", "--dims", "64",
                  "--dtypes", "f32,f64")
    check(rc == 1, f"rowwise fakes: exit 1 (the off one fails; got {rc})")
    try:
        with open(out) as f:
            rows = {r["peer"]: r for r in json.load(f)["duels"]}
    except (OSError, ValueError, KeyError) as e:
        check(False, f"rowwise duel.json: {e}")
        return
    check(set(rows) == {"numpy_rowwise", "numpy_rowwise_off"} and len(rows) == 2,
          f"only f32 duels (the peers' dtypes): {sorted(rows)}")
    ok = rows.get("numpy_rowwise", {})
    check(ok.get("same_math") is False and ok.get("verified") ==
          "bit-exact against numpy_rowwise's own formula" and len(ok.get("reps") or []) >= 5,
          f"numpy_rowwise verified against its own formula and timed ({ok.get('verified')})")
    bad = rows.get("numpy_rowwise_off", {})
    check("verification failed: against numpy_rowwise_off's own formula: param["
          in (bad.get("error") or ""), f"the off one caught ({(bad.get('error') or '')[:160]})")


def test_cstep(lib):
    import cstep
    cs = cstep.CSteps(lib)
    n = 256
    p, s = np.zeros(n, np.float32), np.ones(n, np.float32)
    g = np.ones(n, np.float32)

    def rejects(what, fn, needle):
        try:
            fn()
        except ValueError as e:
            check(needle in str(e), f"cstep rejects {what}: {e}")
            return
        check(False, f"cstep rejects {what}: no ValueError")
    rejects("a float64 grad for float32 p", lambda: cs.dense(p, s, g.astype(np.float64)),
            "g has dtype float64, expected float32")
    rejects("a short grad", lambda: cs.dense(p, s, g[:-1].copy()),
            "g has 255 elements, expected 256")
    rejects("a short state", lambda: cs.dense(p, s[:-3].copy(), g), "s has 253 elements")
    rejects("a non-contiguous grad", lambda: cs.dense(p, s, np.ones(2 * n, np.float32)[::2]),
            "g is not C-contiguous")
    rejects("int32 indices", lambda: cs.coo(p, s, np.arange(4, dtype=np.int32),
                                            np.ones(4, np.float32)), "idx has dtype int32")
    rejects("an index out of range", lambda: cs.coo(p, s, np.array([1, n], np.int64),
                                                    np.ones(2, np.float32)),
            f"idx[1] = {n} is out of range [0, {n})")
    rejects("a row that does not divide n", lambda: cs.coo(p, s, np.array([0], np.int64),
                                                           np.ones(3, np.float32), row=3),
            "row = 3")
    rejects("a read-only param", lambda: cs.dense(np.frombuffer(bytes(4 * n), np.float32), s,
                                                  g), "p is read-only")
    # the library's own checks: a NULL pointer, status 4 and a message
    lib_ = ctypes.CDLL(lib)
    f = lib_.mtcs_steps_adagrad_dense_f32
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64, ctypes.c_double, ctypes.c_double,
                                          ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    msg = ctypes.create_string_buffer(128)
    st = f(None, s.ctypes.data, g.ctypes.data, n, 0.01, 1e-10, 1, msg, 128)
    check(st == 4 and b"p is NULL" in msg.value,
          f"library: NULL p gives status 4 with a message ({st}, {msg.value!r})")
    # the ABI's message contract (steps_abi.c): NUL-terminated and cut to
    # msg_len, nothing written with msg_len 0 or msg NULL, "" on success;
    # NULL is refused from one element, taken with none
    def filled(k=8):
        return ctypes.create_string_buffer(b"X" * k, k)
    one = np.ones(1, np.float32)
    m = filled()
    st = f(None, one.ctypes.data, one.ctypes.data, 1, 0.01, 1e-10, 1, m, 8)
    check(st == 4 and m.raw == b"mtcs_st\0",
          f"library: a message cut to msg_len 8, NUL-terminated ({st}, {m.raw!r})")
    m = filled()
    st = f(None, one.ctypes.data, one.ctypes.data, 1, 0.01, 1e-10, 1, m, 1)
    check(st == 4 and m.raw == b"\0XXXXXXX", f"library: msg_len 1 holds the NUL alone ({m.raw!r})")
    m = filled()
    st = f(None, one.ctypes.data, one.ctypes.data, 1, 0.01, 1e-10, 1, m, 0)
    check(st == 4 and m.raw == b"X" * 8, f"library: msg_len 0 writes nothing ({m.raw!r})")
    st = f(None, one.ctypes.data, one.ctypes.data, 1, 0.01, 1e-10, 1, None, 128)
    check(st == 4, f"library: msg NULL, status alone ({st})")
    m = filled()
    st = f(None, None, None, 0, 0.01, 1e-10, 1, m, 8)
    check(st == 0 and m.raw[0] == 0, f"library: n 0 needs no pointer, message '' ({st}, {m.raw!r})")
    pp, ss = np.ones(1, np.float32), np.ones(1, np.float32)
    m = filled()
    st = f(pp.ctypes.data, ss.ctypes.data, one.ctypes.data, 1, 0.01, 1e-10, 1, m, 8)
    check(st == 0 and m.raw[0] == 0 and ss[0] == 2, f"library: a good step clears the message ({st}, {m.raw!r})")
    # every pointer of every entry point is checked, and named
    fc = lib_.mtcs_steps_adagrad_coo_f64
    fc.restype = ctypes.c_int
    fc.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int64, ctypes.c_int64, ctypes.c_double,
                                           ctypes.c_double, ctypes.c_int, ctypes.c_char_p,
                                           ctypes.c_size_t]
    d1, i1 = np.ones(1), np.zeros(1, np.int64)
    for k, name in enumerate(("p", "s", "idx", "vals")):
        ptrs = [d1.ctypes.data, d1.ctypes.data, i1.ctypes.data, d1.ctypes.data]
        ptrs[k] = None
        st = fc(*ptrs, 1, 1, 0.01, 1e-10, 1, msg, 128)
        check(st == 4 and f"mtcs_steps_adagrad_coo_f64: {name} is NULL with 1 elements".encode()
              == msg.value, f"library: coo NULL {name} ({st}, {msg.value!r})")
    fm = lib_.mtcs_steps_adagrad_masked_dense_f32
    fm.restype = ctypes.c_int
    fm.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int64, ctypes.c_double, ctypes.c_double,
                                           ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    st = fm(pp.ctypes.data, ss.ctypes.data, one.ctypes.data, None, 1, 0.01, 1e-10, 1, msg, 128)
    check(st == 4 and b"mask is NULL" in msg.value, f"library: masked_dense NULL mask ({st}, {msg.value!r})")
    # ... and a good step is the formula (ADA-1 in float32, state 1 + 1 = 2)
    cs.dense(p, s, g)
    want = np.float32(np.float32(-0.01) * np.float32(1)) / np.float32(
        np.sqrt(np.float32(2)) + np.float32(1e-10))
    check(np.array_equal(s, np.full(n, 2, np.float32)) and np.all(p == want),
          f"cstep.dense computes ADA-1 ({p[0]!r} vs {want!r})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps-lib", required=True, help="libmtcs_steps.so")
    a = ap.parse_args()
    lib = os.path.abspath(a.steps_lib)
    with tempfile.TemporaryDirectory(prefix="duel_selftest.") as tmp:
        test_numpy_ref(lib, tmp)
        test_wrong_peers(lib, tmp)
        test_other_math(lib, tmp)
        test_cstep(lib)
    print(f"{len(failures)} failure(s)" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
