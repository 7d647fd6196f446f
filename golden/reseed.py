#!/usr/bin/env python3
"""Reseed: every golden case again, on fresh random data, against live torch.

    .venv/bin/python golden/reseed.py --only reduce --draws 2
    .venv/bin/python golden/reseed.py --filter 'masked_var.*' --backend cpu,cuda-emu
    .venv/bin/python golden/reseed.py --self-test

A committed golden case holds one draw of its inputs: the case's seed is
its id (mtgen.model.case_rng). A reference that is right on that draw and
wrong on the next (a branch only some values take, a mask pattern, a tie)
passes the suite. Reseed asks the other question: it gives each case of
the families named another id (`<id>.reseed<D>`, draw D), so its `build`
draws other values, masks and upstream gradients from the same
description, lets torch compute the outputs exactly as generate.py does
(the same poisons, checks and tolerance headroom), writes the draws into
scratch golden files under --work (never golden/), and runs `mtcs run` on
them with each backend, `--require-all --exact-version --level strict`,
poison re-runs on.

A case whose inputs do not depend on the seed (OpInfo's samples, fixed
corner cases) comes out the same and is left out ("fixed"). A draw on
which torch's float32 or half result has less headroom than generate.py
demands (half the case's tolerance from the float64 result) is run all
the same and listed as "low headroom". A draw that torch accepts where the
case declares an error (the error depends on values this draw did not
repeat) is run as an ok case: the backend must compute what torch did. A
half-precision gradient case's tolerance was measured on its committed
draw (GRAD-9, mtgen.grad.half_tolerance); each draw of it is measured
again, as generate.py would measure a case with that seed. A
draw torch refuses where the case declares success is a "surprise": the
case's description allows inputs the case table did not plan for; it is
counted and listed, not run. Every FAIL, ERROR, CRASH or TIMEOUT is a divergence
between the backend and torch on inputs the case itself describes: the
line names the draw's file and case, and `--repro-dir` holds the replay
(tests/sweep/README.md: such a draw, once understood, becomes a case of
its family with its own id).

Exit status: 0 when every executed draw passed, 1 when one did not, 2 on
bad arguments. Needs the generator's torch (README: `.ci/setup.sh
--full`); nothing it writes is committed.
"""

import argparse
import dataclasses
import fnmatch
import json
import os
import subprocess
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def reseed_id(case_id, draw):
    """The id of draw `draw` of a case: ids stay `[a-z0-9_.]`, and the draw
    is the id's last component, so `variant_of` keeps the case's variant."""
    return f"{case_id}.reseed{draw}"


def fingerprint(inputs):
    """Bytes that differ when two input lists differ in any value, mask,
    layout, dtype or shape (NaN payloads and the sign of zero included)."""
    import torch
    from torch.masked import MaskedTensor

    def one(x):
        if isinstance(x, MaskedTensor):
            return b"M" + one(x.get_data()) + one(x.get_mask())
        if isinstance(x, torch.Tensor):
            d = x.detach()
            if d.layout != torch.strided:
                d = d.to_dense()
            raw = d.contiguous().view(-1).view(torch.uint8) if d.numel() and \
                d.dtype != torch.bool else d.to(torch.uint8).contiguous().view(-1)
            head = f"T{x.layout}{x.dtype}{tuple(x.shape)}:".encode()
            return head + bytes(raw.tolist())
        if isinstance(x, (list, tuple)):
            return b"L" + b"".join(one(v) for v in x) + b"]"
        return f"P{x!r}".encode()
    return b"".join(one(x) for x in inputs)


class DrawFlags:
    """The draws run although generate.py would have refused them, so that
    a failure there is reported as such. Creating it makes generate.py's
    headroom checks (mtgen.tolerance.check_headroom, mtgen.grad.
    check_grad_headroom) record their shortfall instead of raising: a draw
    on which torch's own float32/half result sits less than half a
    tolerance from the float64 one still runs (`low`); run_draw adds the
    declared-error draws torch accepted (`flipped`)."""

    def __init__(self):
        import mtgen.grad
        import mtgen.run
        from mtgen.model import Surprise
        self.low = {}         # id -> the shortfall generate.py would have refused
        self.flipped = set()  # ids of declared-error draws torch accepted, run as ok

        def lenient(orig):
            def check(case, *args):
                try:
                    orig(case, *args)
                except Surprise as e:
                    self.low[case.id] = str(e)
            return check
        for m, n in ((mtgen.run, "check_headroom"), (mtgen.grad, "check_grad_headroom")):
            setattr(m, n, lenient(getattr(m, n)))


def run_draw(case, k, draw, flags):
    """A Result of draw `draw` of case (the k-th of its op), or a surprise's
    text. A draw that torch accepts where the case declares an error (the
    error depends on values the draw did not repeat) is run as an ok case:
    the backend must then compute what torch did."""
    from mtgen.model import NotRaised, Surprise
    from mtgen.run import run_case
    c2 = dataclasses.replace(case, id=reseed_id(case.id, draw))
    if c2.measure:  # a tolerance measured on the committed draw: measure this one's
        try:
            tol = c2.measure(c2)
        except Exception as e:  # noqa: BLE001 - torch refusing the draw is a surprise
            return None, f"{c2.id}: measuring the tolerance raised {type(e).__name__}: {e}"
        if tol is None:
            return None, (f"{c2.id}: no tolerance holds torch's gradient on this draw "
                          "(an overflow or NaN the exact one lacks; generate.py would make no case)")
        c2 = dataclasses.replace(c2, tolerance=tol)
    try:
        return run_case(c2, k), None
    except Surprise as e:
        if not isinstance(e, NotRaised):
            return None, str(e)
        ok = dataclasses.replace(c2, error_class=None, error_match=None)
        try:
            res = run_case(ok, k)
        except Surprise as e2:
            return None, f"{e} (and as an ok case: {e2})"
        flags.flipped.add(ok.id)
        return res, None
    except Exception as e:  # noqa: BLE001 - a build that fails on this draw
        return None, f"{c2.id}: building the inputs raised {type(e).__name__}: {e}"


def draws_of(fam_module, draws, pattern, log, flags):
    """([(draw, [Result])], cases matched, cases fixed, [surprise]): each
    case of the family matching `pattern`, drawn again under each draw's
    id; a case whose inputs do not depend on the seed ("fixed") is left out."""
    from mtgen.model import case_rng
    from mtgen.run import numbered

    surprises, out = [], []
    cases = [(case, k) for case, k in numbered(fam_module.cases())
             if any(fnmatch.fnmatchcase(case.id, p) for p in pattern)]
    fixed = set()
    for case, _ in cases:
        try:
            same = fingerprint(case.build(case_rng(case.id))) == \
                fingerprint(case.build(case_rng(reseed_id(case.id, 1))))
        except Exception:  # noqa: BLE001 - judged when it runs, below
            same = False
        if same:
            fixed.add(case.id)
    for d in draws:
        results = []
        t0 = time.time()
        for case, k in cases:
            if case.id in fixed:
                continue
            res, why = run_draw(case, k, d, flags)
            if res is not None:
                results.append(res)
            else:
                surprises.append(why)
        log(f"  draw {d}: {len(results)} cases drawn by torch ({time.time() - t0:.0f} s)")
        out.append((d, results))
    return out, len(cases), len(fixed), surprises


def run_mtcs(mtcs, path, backend, work, timeout):
    """(counts, [(id, status, message)]) of one mtcs run over one file."""
    tag = os.path.basename(backend).removesuffix(".so")  # a plugin: its file's name
    rep = os.path.join(work, f"{os.path.basename(path)[:-3]}.{tag}.json")
    repro = os.path.join(work, "repro", tag)
    os.makedirs(repro, exist_ok=True)
    cmd = [mtcs, "run", "--golden", path, "--backend", backend, "--profile", "all",
           "--require-all", "--exact-version", "--level", "strict",
           "--report-json", rep, "--repro-dir", repro]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if not os.path.exists(rep):
        raise RuntimeError(f"mtcs exited {p.returncode} without a report:\n"
                           f"{p.stderr.strip()[-2000:]}")
    with open(rep) as f:
        r = json.load(f)
    counts, bad = {}, []
    for c in r["cases"]:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
        if c["status"] != "PASS":
            bad.append((c["id"], c["status"], c.get("message", "")))
    return counts, bad


def self_test():
    """What needs no family: ids, fingerprints, and run_draw on a synthetic case."""
    import torch
    from torch.masked import masked_tensor
    assert reseed_id("sum.masked.f32.basic.grad", 2) == "sum.masked.f32.basic.grad.reseed2"
    from mtgen.model import variant_of
    assert variant_of(reseed_id("sum.masked.f32.basic", 1)) == "basic.reseed1"
    a = [torch.tensor([0.0, 1.0]), 2.0]
    b = [torch.tensor([-0.0, 1.0]), 2.0]
    assert fingerprint(a) != fingerprint(b), "the sign of a zero"
    m1 = masked_tensor(torch.tensor([1.0, 2.0]), torch.tensor([True, False]))
    m2 = masked_tensor(torch.tensor([1.0, 2.0]), torch.tensor([True, True]))
    assert fingerprint([m1]) != fingerprint([m2]), "the mask"
    s = torch.tensor([[0.0, 1.0]]).to_sparse()
    assert fingerprint([s]) != fingerprint([s.to_dense()]), "the layout"
    assert fingerprint([torch.zeros(2, dtype=torch.bool)]) != \
        fingerprint([torch.ones(2, dtype=torch.bool)])
    _self_test_draws()
    print("reseed self-test passed: ids, fingerprints of values, signs, masks, layouts; "
          "a declared error torch accepts runs as ok, a refusal is a surprise, "
          "tolerances derived and measured per draw")
    return 0


def _self_test_draws():
    """run_draw's paths on a synthetic case (torch.neg of one drawn value)."""
    import torch
    from mtgen.model import Case

    def neg(**kw):
        base = dict(id="neg.dense.f32.selftest", op="neg", rules=(), tolerance="exact",
                    build=lambda g: [torch.rand(2, generator=g)],
                    run=lambda ins, k: [torch.neg(ins[0])], torch_call="torch.neg(x)",
                    poison=False)
        return Case(**{**base, **kw})
    flags = DrawFlags()
    res, why = run_draw(neg(error_class="INVALID_ARGUMENT"), 0, 1, flags)
    assert why is None and res.outputs and "neg.dense.f32.selftest.reseed1" in flags.flipped, why
    res, why = run_draw(neg(run=lambda ins, k: [torch.neg(ins[0], bad=1)]), 0, 1, flags)
    assert res is None and "declared ok, torch raised TypeError" in why, why
    res, why = run_draw(neg(tolerance=None, tolerance_of=lambda outs: "abs:0.5"), 0, 1, flags)
    assert why is None and res.tolerance == "abs:0.5", why
    seen = []
    res, why = run_draw(neg(tolerance="ulp:1", measure=lambda c: seen.append(c.id) or "ulp:3"),
                        0, 2, flags)
    assert why is None and res.tolerance == "ulp:3" and seen == [reseed_id(neg().id, 2)], why
    res, why = run_draw(neg(measure=lambda c: None), 0, 1, flags)
    assert res is None and "no tolerance holds" in why, why


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--only", action="append", default=[], metavar="FAMILY",
                    help="a family of golden/mtgen/families (repeatable; default all)")
    ap.add_argument("--filter", action="append", default=[], metavar="GLOB",
                    help="only cases whose (committed) id matches this fnmatch glob; "
                         "repeatable (default every case)")
    ap.add_argument("--draws", type=int, default=1, metavar="N",
                    help="draws per case (default 1)")
    ap.add_argument("--first", type=int, default=1, metavar="D",
                    help="the first draw's number (default 1): draws D .. D+N-1")
    ap.add_argument("--backend", default="cpu",
                    help="backends to run, comma-separated (default cpu; cuda-emu is the "
                         "CUDA backend's kernels on the host)")
    ap.add_argument("--mtcs", default=os.path.join(ROOT, "build", "release", "mtcs"),
                    help="the runner (default build/release/mtcs)")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "reseed"),
                    help="scratch golden files, reports and replays (default build/reseed)")
    ap.add_argument("--timeout", type=int, default=3600,
                    help="seconds one mtcs run may take (default 3600)")
    ap.add_argument("--self-test", action="store_true",
                    help="check ids, fingerprints and how a draw is run (no family)")
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore", category=UserWarning)  # MaskedTensor is a prototype
    if a.self_test:
        return self_test()
    from mtgen.families import FAMILIES
    from mtgen.writer import root_attributes, write_family
    import torch
    bad = [f for f in a.only if f not in FAMILIES]
    if bad:
        ap.error(f"unknown family {bad[0]!r} (known: {', '.join(FAMILIES)})")
    if a.draws < 1 or a.first < 1:
        ap.error("--draws and --first must be at least 1")
    backends = [b for b in a.backend.split(",") if b]
    if not os.access(a.mtcs, os.X_OK):
        ap.error(f"--mtcs {a.mtcs}: not an executable (build it: cmake --build --preset "
                 "release)")
    torch.use_deterministic_algorithms(True)
    os.makedirs(a.work, exist_ok=True)
    meta = root_attributes(generator="golden/reseed.py")
    pattern = a.filter or ["*"]
    draws = range(a.first, a.first + a.draws)
    total_bad, summary = [], []

    def log(msg):
        print(msg, flush=True)

    flags = DrawFlags()
    for fam in a.only or list(FAMILIES):
        log(f"{fam}:")
        per_draw, n_cases, n_fixed, surprises = draws_of(FAMILIES[fam], draws, pattern, log,
                                                         flags)
        for s in surprises:
            log(f"  surprise: {s}")
        counts = {}
        for d, results in per_draw:
            if not results:
                continue
            path = os.path.join(a.work, f"{fam}.reseed{d}.h5")
            write_family(path, results, meta)
            for b in backends:
                c, bad_cases = run_mtcs(a.mtcs, path, b, a.work, a.timeout)
                for k, v in c.items():
                    counts[(b, k)] = counts.get((b, k), 0) + v
                for cid, st, msg in bad_cases:
                    total_bad.append((fam, b, cid))
                    why = (" [torch's own result has less than half the tolerance of "
                           "headroom here]" if cid in flags.low else "") + \
                        (" [declared an error; torch accepted this draw]"
                         if cid in flags.flipped else "")
                    log(f"  {st} {b} {os.path.relpath(path, ROOT)} {cid}: {msg}{why}")
        ids = {r.case.id for _, results in per_draw for r in results}
        low, flipped = len(ids & set(flags.low)), len(ids & flags.flipped)
        for cid in sorted(ids & set(flags.low)):
            log(f"  low headroom (run all the same): {flags.low[cid]}")
        for cid in sorted(ids & flags.flipped):
            log(f"  declared an error, torch accepted the draw (run as ok): {cid}")
        line = (f"{fam}: {n_cases} cases, {n_fixed} fixed (no seed), "
                f"{len(ids)} draws run by torch ({low} of low headroom, {flipped} "
                f"errors torch did not raise), {len(surprises)} surprises; " +
                "; ".join(f"{b} " + ", ".join(f"{k} {v}" for (bb, k), v in sorted(counts.items())
                                             if bb == b) for b in backends))
        summary.append(line)
        log(line)
    log("\nreseed summary:\n  " + "\n  ".join(summary))
    if total_bad:
        log(f"reseed: {len(total_bad)} draws diverge from torch; replays under "
            f"{os.path.relpath(os.path.join(a.work, 'repro'), ROOT)}")
        return 1
    log("reseed: every executed draw matches torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
