"""Gradient cases (golden format 3, spec/golden-format.md "Gradient cases").

A backward case runs its op's forward on leaf inputs (every floating
tensor input requires grad: a dense tensor, a MaskedTensor, a sparse one),
calls torch.autograd.backward(outputs, grad_outputs) with seeded upstream
gradients of the outputs' own kind and layout (a MaskedTensor's carries the
output's mask; a sparse one the output's indices), and records each leaf's
`.grad` as torch made it (MaskedTensor, dense, COO, CSR ...), None where
torch gives none. Masked-out data of the upstream gradients is poisoned like
the inputs' (the runner's MASK-9 re-runs reach them too).
"""
import dataclasses
import math

import torch
from torch.masked import MaskedTensor, masked_tensor

from .inputs import as_dense, to_f64
from .model import Case, NotRaised, Result, Surprise, case_rng
from .poison import apply_poison
from .tolerance import within


def data_of(x):
    """A MaskedTensor's data, anything else itself."""
    return x.get_data() if isinstance(x, MaskedTensor) else x


def floating(x):
    """x is a floating tensor (a MaskedTensor: its data is)."""
    t = data_of(x)
    return isinstance(t, torch.Tensor) and t.is_floating_point()


def first_float_dtype(inputs):
    """The dtype of the first floating tensor among inputs, None if none."""
    return next((data_of(x).dtype for x in inputs if floating(x)), None)


def leaf(x):
    """x as a fresh leaf that requires grad (floating tensors), else x."""
    if not floating(x):
        return x
    if isinstance(x, MaskedTensor):
        return masked_tensor(x.get_data().clone(), x.get_mask().clone(), requires_grad=True)
    return x.detach().clone().requires_grad_(True)


def _like(t, g):
    """A tensor of t's layout, shape and structure with seeded values."""
    dt = t.dtype
    if t.layout == torch.strided:
        return torch.randn(t.shape, generator=g, dtype=torch.float64).to(dt)
    if t.layout == torch.sparse_coo:
        v = t._values()
        out = torch.sparse_coo_tensor(t._indices().clone(),
                                      torch.randn(v.shape, generator=g,
                                                  dtype=torch.float64).to(dt), t.shape)
        return out._coalesced_(t.is_coalesced())
    v = t.values()
    vals = torch.randn(v.shape, generator=g, dtype=torch.float64).to(dt)
    if t.layout in (torch.sparse_csr, torch.sparse_bsr):
        return torch.sparse_compressed_tensor(t.crow_indices().clone(), t.col_indices().clone(),
                                              vals, t.shape, layout=t.layout)
    return torch.sparse_compressed_tensor(t.ccol_indices().clone(), t.row_indices().clone(),
                                          vals, t.shape, layout=t.layout)


def grad_like(out, g):
    """The seeded upstream gradient of a forward output: its kind, layout,
    dtype and shape (a MaskedTensor's with the output's mask)."""
    if isinstance(out, MaskedTensor):
        return masked_tensor(_like(out.get_data().detach(), g), out.get_mask().clone())
    if not isinstance(out, torch.Tensor):
        raise Surprise(f"output {out!r} is not a tensor: no gradient flows from it")
    return _like(out.detach(), g)


def neg_zero_like(out, g, step=2):
    """out's seeded upstream gradient (grad_like) with -0.0 at every step-th
    element of its data (the stored values of a sparse one), the first among
    them: a copy of it keeps the sign, a sum started from +0.0 loses it."""
    go = grad_like(out, g)
    t = data_of(go)
    vals = t._values() if t.layout == torch.sparse_coo else \
        t if t.layout == torch.strided else t.values()
    vals.view(-1)[0::step] = -0.0
    return go


# float32/float64's significand: ulp(e) > |e| * 2^-(SIG + 1) for a normal e
SIG_BITS = {"f32": 23, "f64": 52}


def sign_tolerance(tol, d):
    """A tolerance that accepts what tol accepts and compares the sign of a
    zero (exact and ulp:N do; abs:X and rel:X do not): rel:X becomes ulp:N
    with N = ceil(X * 2^(p + 1)), p the significand's bits, since
    ulp(e) > |e| * 2^-(p + 1) for every normal e (at most twice as loose)."""
    if tol == "exact" or tol.startswith("ulp:"):
        return tol
    short = d.id.split(".")[2]
    if tol.startswith("rel:") and short in SIG_BITS:
        return f"ulp:{math.ceil(float(tol[4:]) * 2.0 ** (SIG_BITS[short] + 1))}"
    raise Surprise(f"{d.id}: tolerance {tol} has no sign-comparing form")


def neg_zero_twins(picked, table, keep_tolerance=False):
    """The twins of the picked cases named in table ({case id: step}): id
    `<base id without .grad>.upstream_neg_zero.grad`, upstream gradients
    neg_zero_like(step), rule GRAD-10 added; tolerance exact, or with
    keep_tolerance the base case's in a form that compares the sign of a
    zero (sign_tolerance). A KeyError: the picks moved; choose again."""
    by_id = {d.id: d for d in picked}
    out = []
    for cid, step in table.items():
        d = by_id[cid]
        assert d.error_class is None and cid.endswith(".grad"), cid
        tol = sign_tolerance(d.tolerance, d) if keep_tolerance else "exact"
        out.append(dataclasses.replace(
            d, id=cid[:-len(".grad")] + ".upstream_neg_zero.grad", tolerance=tol, measure=None,
            rules=tuple(d.rules) + ("GRAD-10",),
            torch_call=d.torch_call.replace("; backward", "; backward of -0.0s"),
            grad_outputs=lambda outs, g, step=step: [neg_zero_like(o, g, step) for o in outs]))
    return out


def upstream(case, outs, g):
    """The upstream gradients of case's forward outputs outs: the case's own
    (Case.grad_outputs) or grad_like of each, seeded from g."""
    if case.grad_outputs is not None:
        return list(case.grad_outputs(outs, g))
    return [grad_like(o, g) for o in outs]


def backward(case, inputs, gouts_of=None):
    """(leaves, outputs, grad_outputs, grads) of case on inputs; raises what
    torch's backward raises. gouts_of(outputs): the upstream gradients
    (default: seeded from the case id, unpoisoned)."""
    leaves = [leaf(x) for x in inputs]
    outs = case.run(leaves, case.kwargs)
    if gouts_of is None:
        gouts = upstream(case, outs, case_rng(case.id + "/grad_outputs"))
    else:
        gouts = gouts_of(outs)
    torch.autograd.backward(list(outs), list(gouts))
    grads = [_materialized(x.grad) if floating(x) and isinstance(x, torch.Tensor) else None
             for x in leaves]
    return leaves, outs, gouts, grads


def _materialized(g):
    """g, a ZeroTensor made an ordinary tensor of zeros (sgn's backward gives
    torch._efficientzerotensor, which has no storage: numpy and h5py refuse it)."""
    if isinstance(g, torch.Tensor) and not isinstance(g, MaskedTensor) and g._is_zerotensor():
        return g.clone()
    return g


def run_backward(case: Case, k: int, torch_error_text) -> Result:
    """Runs a backward case (the k-th of its op: picks the poison)."""
    inputs = case.build(case_rng(case.id))
    poison = "none"
    if case.poison:
        inputs, poison = apply_poison(inputs, case.op, k)
    res = Result(case, inputs, poison, rules=case.rules, tolerance=case.tolerance)
    res.requires_grad = tuple(i for i, x in enumerate(inputs) if floating(x))
    g = case_rng(case.id + "/grad_outputs")

    def poisoned_gouts(outs):
        gouts = upstream(case, outs, g)
        if case.poison:
            gouts, _ = apply_poison(gouts, case.op, k)
        res.grad_outputs = gouts
        return gouts

    try:
        _, _, _, grads = backward(case, inputs, poisoned_gouts)
    except Exception as e:  # noqa: BLE001 - torch's refusal of the backward is data
        if not res.grad_outputs:
            raise Surprise(f"{case.id}: the forward raised {torch_error_text(e)} "
                           "(a backward case needs a forward that succeeds)") from e
        if case.error_class is None:
            raise Surprise(f"{case.id}: declared ok, torch's backward raised "
                           f"{torch_error_text(e)}") from e
        res.torch_error = torch_error_text(e)
        if case.error_match and case.error_match not in res.torch_error:
            raise Surprise(f"{case.id}: torch raised {res.torch_error!r}, expected "
                           f"{case.error_match!r}") from e
        return res
    if case.error_class is not None:
        raise NotRaised(f"{case.id}: declared error {case.error_class}, torch's backward did "
                        "not raise")
    res.grads = [None if x is None else x.detach() if not isinstance(x, MaskedTensor) else x
                 for x in grads]
    if all(x is None for x in res.grads):
        raise Surprise(f"{case.id}: torch gave no input a gradient")
    check_grad_headroom(case, inputs, res)
    return res


NARROW = (torch.float32, torch.float16, torch.bfloat16)  # checked against float64


def _grad_pairs(case, inputs, grads, grad_outputs):
    """[(k, got, want, bf16)] of every gradient torch gave: got as numpy in
    its own dtype (bfloat16 widened to float32), want the float64
    computation (inputs and upstream gradients widened) rounded to got's
    dtype; a MaskedTensor's under its mask only."""
    _, _, _, ref = backward(case, [to_f64(x) for x in inputs],
                            lambda outs: [to_f64(x) for x in grad_outputs])
    out = []
    for k, (got, want) in enumerate(zip(grads, ref)):
        if got is None:
            continue
        gd = as_dense(got).detach()
        wd = as_dense(want).detach().to(gd.dtype)
        bf16 = gd.dtype == torch.bfloat16
        if bf16:
            gd, wd = gd.float(), wd.float()
        gn, wn = gd.numpy(), wd.numpy()
        if isinstance(got, MaskedTensor):
            sel = as_dense(got.get_mask()).numpy()
            gn, wn = gn[sel], wn[sel]
        out.append((k, gn, wn, bf16))
    return out


def check_grad_headroom(case, inputs, res):
    """Surprise unless every float32, float16 or bfloat16 gradient lies
    within half of the case tolerance of the float64 computation (as
    tolerance.check_headroom does for outputs), where it is compared: a
    MaskedTensor's under its mask."""
    if case.tolerance == "exact" or not any(
            getattr(grad_data(x), "dtype", None) in NARROW for x in inputs):
        return
    for k, gn, wn, bf16 in _grad_pairs(case, inputs, res.grads, res.grad_outputs):
        if not within(gn, wn, case.tolerance, 0.5, bf16).all():
            raise Surprise(f"{case.id}: grad {k} is not within half of {case.tolerance} of "
                           "the float64 gradient")


def grad_data(x):
    """data_of(x) for tensors, None for anything else."""
    t = data_of(x)
    return t if isinstance(t, torch.Tensor) else None


# Half-precision gradients: torch runs the derivative formula op by op in
# float16/bfloat16 (each op computed in float and rounded), so its result
# sits a few ulps from the exact gradient, more where the formula cancels
# (softmax's g - sum(g * y)). A backend computing in double and rounding
# once sits within half an ulp. Each case takes the tightest rung of
# HALF_RUNGS that torch's own gradient meets within half of it (check_grad_
# headroom), else abs:2^k, the smallest power of two that holds torch with
# that headroom; a case where no rung holds (torch overflowing where the
# exact gradient is finite, a NaN where it is not) has no expectation a
# double-precision backend can meet and gets no case (half_tolerance: None).
HALF = (torch.float16, torch.bfloat16)
HALF_RUNGS = ("ulp:1", "ulp:2", "ulp:4", "ulp:8", "ulp:16", "ulp:64")


def half_tolerance(case):
    """The tolerance of half-precision backward case `case` (the first rung
    torch's gradient meets with headroom, over its unpoisoned inputs), or
    None when none does; Surprise unless every gradient torch gives has its
    input's dtype (GRAD-9)."""
    import numpy as np
    inputs = case.build(case_rng(case.id))
    g = case_rng(case.id + "/grad_outputs")
    box = {}

    def gouts_of(outs):
        box["gouts"] = upstream(case, outs, g)
        return box["gouts"]
    _, _, _, grads = backward(case, inputs, gouts_of)
    for k, (x, gr) in enumerate(zip(inputs, grads)):
        if gr is not None and data_of(gr).dtype != data_of(x).dtype:
            raise Surprise(f"{case.id}: grad {k} has dtype {data_of(gr).dtype}, its input "
                           f"{data_of(x).dtype}")
    pairs = _grad_pairs(case, inputs, grads, box["gouts"])
    for rung in HALF_RUNGS:
        if all(within(gn, wn, rung, 0.5, bf16).all() for _, gn, wn, bf16 in pairs):
            return rung
    worst = 0.0
    for _, gn, wn, _ in pairs:
        same = (gn == wn) | (np.isnan(gn) & np.isnan(wn))
        if (~same & ~np.isfinite(wn)).any() or (~same & ~np.isfinite(gn)).any():
            return None
        if gn.size:
            worst = max(worst, float(np.max(np.abs(gn.astype(np.float64) - wn))))
    return f"abs:{2.0 ** math.ceil(math.log2(2 * worst))!r}" if worst > 0 else "ulp:1"


# ---- deriving backward cases from forward ones -----------------------------------------

GRAD_TOL = {torch.float32: "rel:1e-4", torch.float64: "rel:1e-10"}


def _probe(case):
    """(differentiable, error) of case's backward on its unpoisoned inputs:
    differentiable is False when no output is a floating tensor that
    requires grad (nothing to backpropagate: no case); error is the
    exception torch's backward raised, or None."""
    import warnings
    inputs = case.build(case_rng(case.id))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        leaves = [leaf(x) for x in inputs]
        try:
            outs = case.run(leaves, case.kwargs)
        except Exception:  # noqa: BLE001 - the forward refuses: no backward case
            return False, None
        if not outs or not all(floating(o) and getattr(o, "requires_grad", False)
                               for o in outs):
            return False, None
        try:
            g = case_rng(case.id + "/grad_outputs")
            torch.autograd.backward(list(outs), upstream(case, outs, g))
        except Exception as e:  # noqa: BLE001 - torch's refusal is data
            return True, e
    return True, None


def grad_case(c: Case, rules=(), tolerance=None, classify=None, suffix="grad",
              grad_outputs=None):
    """The backward case of forward case c (same inputs, kwargs, call and
    source; id `<c.id>.<suffix>`), or None when c's outputs carry no
    gradient. Its expectation is probed from torch: the gradients, or the
    refusal's error class (classify(e); default mtgen.sparse.error_class).
    tolerance: default GRAD_TOL by the first floating input's dtype
    (c's own when c is exact and every input is float64). grad_outputs:
    the case's upstream gradients (Case.grad_outputs; default seeded)."""
    from . import sparse
    if c.error_class is not None or c.profile != "torch":
        return None
    d = Case(id=f"{c.id}.{suffix}", op=c.op, rules=tuple(rules) or c.rules, tolerance="exact",
             build=c.build, run=c.run, torch_call=f"{c.torch_call}; backward",
             kwargs=c.kwargs, poison=c.poison, input_masks=c.input_masks, source=c.source,
             backward=True, grad_outputs=grad_outputs)
    ok, err = _probe(d)
    if not ok:
        return None
    dt = first_float_dtype(d.build(case_rng(d.id)))
    if tolerance is None:
        tolerance = GRAD_TOL.get(dt, "rel:1e-2") if dt is not None else "exact"
    d.tolerance = tolerance
    if err is not None:
        d.error_class = (classify or sparse.error_class)(err)
    elif dt in HALF:
        d.tolerance = half_tolerance(d)
        if d.tolerance is None:
            return None
        d.measure = half_tolerance
        d.rules = tuple(d.rules) + ("GRAD-9",)
    return d


def grad_cases(forward, keep=lambda c: True, **kw):
    """grad_case of every forward case `keep` selects, those that carry a
    gradient, in order."""
    out = []
    for c in forward:
        if keep(c):
            d = grad_case(c, **kw)
            if d is not None:
                out.append(d)
    return out
