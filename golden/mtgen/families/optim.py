"""Family optim: adagrad_dense, adagrad_sparse, adagrad_masked (ADA-1..ADA-7)."""
from typing import Callable, NamedTuple

import torch
from torch.masked import MaskedTensor, masked_tensor

from ..inputs import (as_dense, coo_as_masked, masked_as_coo, neg_zeros, rand_coo, rand_mask,
                      randn, tutorial_grad, uniform)
from ..model import DTYPES, Case, Surprise, check_ids, py
from ..tolerance import within
from .optim_layouts import layout_cases

HP_KEYS = ("lr", "lr_decay", "weight_decay", "eps", "maximize", "step")
TUTORIAL_HP = dict(lr=0.1, lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=False, step=1)
RANDOM_HP = dict(lr=0.05, lr_decay=0.01, weight_decay=0.0, eps=1e-10, maximize=False, step=3)
EPS0_HP = dict(TUTORIAL_HP, eps=0.0)
RANDOM_SHAPE = (5, 7)
ADAGRAD_TOL = "ulp:4"


def _scalar_dtype():
    """The dtype torch.optim keeps `step` in (imported here: torch 1.13,
    which golden/variants.py runs the cases under, has no _get_scalar_dtype
    and creates the state eagerly, so it never gets here)."""
    from torch.optim.optimizer import _get_scalar_dtype
    return _get_scalar_dtype()


def adagrad_torch(ins, hp):
    """torch.optim.Adagrad (single-tensor path) from a preset state.
    Dense grad: torch's dense path; COO grad: torch's _make_sparse path."""
    param, grad, state_sum = ins
    p = param.clone()
    opt = torch.optim.Adagrad([p], lr=hp["lr"], lr_decay=hp["lr_decay"],
                              weight_decay=hp["weight_decay"], eps=hp["eps"],
                              maximize=hp["maximize"], foreach=False)
    state = opt.state[p]
    if not state:  # torch versions that create the state lazily: as _init_group does
        state["step"] = torch.tensor(0.0, dtype=_scalar_dtype())
        state["sum"] = torch.full_like(p, 0.0, memory_format=torch.preserve_format)
    state["sum"].copy_(state_sum)
    state["step"].fill_(hp["step"] - 1)  # Adagrad increments it before use
    p.grad = grad.clone()
    opt.step()
    new_sum = state["sum"]
    if grad.is_sparse:  # std over the coalesced grad indices, as torch computes it
        g = grad.coalesce()
        s = new_sum.sparse_mask(g)
        std = torch.sparse_coo_tensor(s.indices(), s.values().sqrt().add(hp["eps"]),
                                      s.shape).coalesce()
    else:
        std = new_sum.sqrt().add(hp["eps"])
    return [p.detach(), new_sum.clone(), std]


def adagrad_masked(ins, hp):
    """The tutorial's MaskedTensor Adagrad (COO grad), or the same with a
    dense-storage masked grad; clr and maximize as torch.optim.Adagrad."""
    param, grad, state_sum = ins
    clr = hp["lr"] / (1 + (hp["step"] - 1) * hp["lr_decay"])
    eps = hp["eps"]
    if isinstance(grad, MaskedTensor):
        masked_grad = -grad if hp["maximize"] else grad
        mask = masked_grad.get_mask()
        state_sum = state_sum + masked_grad.pow(2).to_tensor(0)
        std = masked_tensor(state_sum, mask).sqrt().add(eps)
        param = param.add((masked_grad / std).to_tensor(0), alpha=-clr)
    else:
        grad = -grad if hp["maximize"] else grad
        mask = (grad.to_dense() != 0).to_sparse()
        masked_grad = masked_tensor(grad, mask)
        state_sum = state_sum + masked_grad.pow(2).get_data()
        std = masked_tensor(state_sum.to_sparse(), mask).sqrt().add(eps)
        param = param.add((masked_grad / std).get_data(), alpha=-clr)
    return [param, state_sum, std]


def adagrad_call(path, hp, masked_storage=False):
    h = ", ".join(f"{k}={py(hp[k])}" for k in HP_KEYS[:5])
    if path != "masked":
        return (f"opt = torch.optim.Adagrad([param], {h}, foreach=False); "
                f"opt.state[param]['sum'].copy_(state_sum); "
                f"opt.state[param]['step'].fill_({hp['step'] - 1}); "
                f"param.grad = grad; opt.step()")
    clr = f"clr = {py(hp['lr'])} / (1 + ({hp['step']} - 1) * {py(hp['lr_decay'])}); "
    if masked_storage:
        neg = "-" if hp["maximize"] else ""
        return (clr + f"masked_grad = {neg}grad; mask = masked_grad.get_mask(); "
                "state_sum = state_sum + masked_grad.pow(2).to_tensor(0); "
                f"std = masked_tensor(state_sum, mask).sqrt().add({py(hp['eps'])}); "
                "param = param.add((masked_grad / std).to_tensor(0), alpha=-clr)")
    neg = "grad = -grad; " if hp["maximize"] else ""
    return (clr + neg + "mask = (grad.to_dense() != 0).to_sparse(); "
            "masked_grad = masked_tensor(grad, mask); "
            "state_sum = state_sum + masked_grad.pow(2).get_data(); "
            f"std = masked_tensor(state_sum.to_sparse(), mask).sqrt().add({py(hp['eps'])}); "
            "param = param.add((masked_grad / std).get_data(), alpha=-clr)")


class AdagradOp(NamedTuple):
    path: str             # the variable part of the op name
    rule: str             # the rule of the path
    run: Callable         # torch's computation
    layout: str           # the grad layout of the tutorial cases
    tolerance: str


# op -> its row: one op per Adagrad path
OPS = {"adagrad_dense": AdagradOp("dense", "ADA-1", adagrad_torch, "dense", ADAGRAD_TOL),
       "adagrad_sparse": AdagradOp("sparse", "ADA-2", adagrad_torch, "coo", ADAGRAD_TOL),
       "adagrad_masked": AdagradOp("masked", "ADA-3", adagrad_masked, "coo", ADAGRAD_TOL)}
PATHS = {o.path: o for o in OPS.values()}


# -- inputs [param, grad, state_sum]

def tutorial_inputs(path, dt=torch.float32):
    grad = tutorial_grad(dt)
    grad = grad.to_dense() if path == "dense" else grad
    param = torch.arange(8, dtype=dt).reshape(2, 4)
    return [param, grad, torch.full_like(param, 0.5)]


def tutorial_step2_inputs(path):
    ins = tutorial_inputs(path)
    p1, s1, _ = PATHS[path].run(ins, TUTORIAL_HP)
    return [p1, ins[1], s1]


def eps0_inputs(path):
    grad = tutorial_grad(values=(3.0, 0.0, 5.0))  # one explicitly stored zero
    grad = grad.to_dense() if path == "dense" else grad
    param = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    return [param, grad, torch.zeros_like(param)]


def random_param(g, dt):  # |p| in [1, 2]: the update never cancels p
    sign = torch.where(rand_mask(g, RANDOM_SHAPE, 0.5), 1.0, -1.0).to(dt)
    return sign * uniform(g, RANDOM_SHAPE, dt, 1.0, 2.0)


def random_inputs(grad_kind, g, dt):
    param = random_param(g, dt)
    grad = {
        "dense": lambda: randn(g, RANDOM_SHAPE, dt),
        "coo": lambda: rand_coo(g, RANDOM_SHAPE, dt),
        "coo_uncoalesced": lambda: rand_coo(g, RANDOM_SHAPE, dt, duplicates=3),
        "masked": lambda: coo_as_masked(rand_coo(g, RANDOM_SHAPE, dt)),
    }[grad_kind]()
    return [param, grad, uniform(g, RANDOM_SHAPE, dt, 0.5, 3.0)]


# -- checks against the tutorial and the eps-placement analysis

TUT_IDX = ((0, 1, 1), (2, 0, 2))
TUT = {
    "param1": [[0, 1, 1.9027, 3], [3.9015, 5, 5.9010, 7]],
    "sum1": [[0.5, 0.5, 9.5, 0.5], [16.5, 0.5, 25.5, 0.5]],
    "std1": [3.0822, 4.0620, 5.0498],
    "param2": [[0, 1, 1.8329, 3], [3.8314, 5, 5.8306, 7]],
}


def expect_close(what, got, want, atol=1e-4):
    want = torch.tensor(want, dtype=got.dtype)
    if not torch.allclose(got, want, atol=atol, rtol=0):
        raise Surprise(f"{what}: torch gives {got.tolist()}, tutorial says {want.tolist()}")


def check_tutorial_step1(ins, outs):
    p, s, std = outs
    expect_close("tutorial step 1 param", p, TUT["param1"])
    expect_close("tutorial step 1 state_sum", s, TUT["sum1"])
    expect_close("tutorial step 1 std", as_dense(std)[TUT_IDX], TUT["std1"])


def check_tutorial_step2(ins, outs):
    expect_close("tutorial step 2 param", outs[0], TUT["param2"])


def eps0_check(nan_at):
    """Param is NaN exactly at `nan_at` (list of index pairs)."""
    def check(ins, outs):
        want = torch.zeros(2, 4, dtype=torch.bool)
        for idx in nan_at:
            want[idx] = True
        got = outs[0].isnan()
        if not torch.equal(got, want):
            raise Surprise(f"eps=0 NaN pattern {got.nonzero().tolist()}, "
                           f"expected {want.nonzero().tolist()}")
    return check


EPS0_NAN = {
    "dense": [(r, c) for r in range(2) for c in range(4) if (r, c) not in ((0, 2), (1, 2))],
    "sparse": [(1, 0)],
    "masked": [],
}


def forms_agree(hp, tol):
    """The COO (tutorial) form and the dense-storage form of the masked path
    give the same param and state_sum, and the same std where masked in, up
    to the case tolerance (torch's add(sparse, alpha) and add(dense, alpha)
    round differently: 1 ulp apart on the tutorial)."""
    def check(ins, outs):
        param, grad, state_sum = ins
        if isinstance(grad, MaskedTensor):
            other = masked_as_coo(grad)
        else:  # the tutorial's mask: the non-zero values of the COO grad
            dense = grad.to_dense()
            other = masked_tensor(dense, dense != 0)
        alt = adagrad_masked([param, other, state_sum], hp)
        for name, a, b in (("param", outs[0], alt[0]), ("state_sum", outs[1], alt[1])):
            if not within(a.numpy(), b.numpy(), tol).all():
                raise Surprise(f"masked path: COO and dense-storage forms disagree on {name}")
        mask = as_dense(outs[2].get_mask())
        if not torch.equal(mask, as_dense(alt[2].get_mask())) or not within(
                as_dense(outs[2])[mask].numpy(), as_dense(alt[2])[mask].numpy(), tol).all():
            raise Surprise("masked path: COO and dense-storage forms disagree on std")
    return check


def all_checks(*checks):
    def check(ins, outs):
        for c in checks:
            if c:
                c(ins, outs)
    return check


def adagrad_case(path, layout, short, variant, build, hp, rules=(), error_class=None,
                 check=None, error_match=None, compare_forms=True):
    masked_storage = layout == "masked"
    if path == "masked" and error_class is None and compare_forms:
        check = all_checks(check, forms_agree(hp, ADAGRAD_TOL))
    return Case(
        id=f"adagrad_{path}.{layout}.{short}.{variant}", op=f"adagrad_{path}",
        rules=(PATHS[path].rule,) + tuple(rules), tolerance=PATHS[path].tolerance,
        build=build, run=PATHS[path].run, torch_call=adagrad_call(path, hp, masked_storage),
        kwargs={k: hp[k] for k in HP_KEYS}, error_class=error_class, check=check,
        error_match=error_match)


# (path, grad kind, variant, hyper-parameter overrides)
ADAGRAD_RANDOM = [
    ("dense", "dense", "random", {}),
    ("dense", "dense", "random_maximize", {"maximize": True}),
    ("dense", "dense", "random_weight_decay", {"weight_decay": 0.1}),
    ("sparse", "coo", "random", {}),
    ("sparse", "coo", "random_maximize", {"maximize": True}),
    ("sparse", "coo_uncoalesced", "random_uncoalesced", {}),
    ("masked", "coo", "random", {}),
    ("masked", "coo", "random_maximize", {"maximize": True}),
    ("masked", "masked", "random", {}),
    ("masked", "masked", "random_maximize", {"maximize": True}),
    # combined options
    ("dense", "dense", "random_maximize_weight_decay", {"maximize": True, "weight_decay": 0.1}),
]
# lr_decay with step > 1 (clr = lr / (1 + (step - 1) * lr_decay)), alone and
# with maximize, on every path
GRAD_KINDS = [("dense", "dense"), ("sparse", "coo"), ("masked", "coo"), ("masked", "masked")]
ADAGRAD_RANDOM += [(path, kind, variant, over) for path, kind in GRAD_KINDS for variant, over in (
    ("random_lr_decay_step5", {"lr_decay": 0.25, "step": 5}),
    ("random_maximize_lr_decay_step4", {"maximize": True, "lr_decay": 0.25, "step": 4}))]
# (path, grad kind, variant, hyper-parameter overrides, the first check torch
# makes). Two violations at once pin torch's order: lr, lr_decay,
# weight_decay, eps in Adagrad.__init__, then weight decay with a sparse
# gradient in step().
ADAGRAD_ERRORS = [
    ("dense", "dense", "negative_lr", {"lr": -0.1}, None),
    ("dense", "dense", "negative_eps", {"eps": -1e-10}, None),
    ("dense", "dense", "negative_weight_decay", {"weight_decay": -0.1}, None),
    ("dense", "dense", "negative_lr_decay", {"lr_decay": -0.5}, None),
    ("sparse", "coo", "weight_decay_sparse_grad", {"weight_decay": 0.1}, None),
    ("dense", "dense", "negative_lr_and_eps", {"lr": -0.1, "eps": -1e-10},
     "Invalid learning rate"),
    ("dense", "dense", "negative_lr_decay_and_weight_decay",
     {"lr_decay": -0.5, "weight_decay": -0.1}, "Invalid lr_decay value"),
    ("dense", "dense", "negative_weight_decay_and_eps", {"weight_decay": -0.1, "eps": -1e-10},
     "Invalid weight_decay value"),
    ("sparse", "coo", "negative_weight_decay_sparse_grad", {"weight_decay": -0.1},
     "Invalid weight_decay value"),
    ("sparse", "coo", "negative_lr_weight_decay_sparse_grad", {"lr": -0.1, "weight_decay": 0.1},
     "Invalid learning rate"),
]

# signed zeros: param and grad hold ±0; p + (-clr) * (+0) / std keeps -0 only
# where both are -0 ... torch decides, the check only wants a -0 somewhere.
SIGNED = (-0.0, 0.0, -1.5, 1.5)
SIGNED_GRAD = (-0.0, 0.0, 0.5, -2.0)


def pick(g, values, shape, dt):
    return torch.tensor(values, dtype=dt)[torch.randint(len(values), shape, generator=g)]


def signed_zero_inputs(grad_kind, g, dt):
    param = pick(g, SIGNED, RANDOM_SHAPE, dt)
    if grad_kind == "dense":
        grad = pick(g, SIGNED_GRAD, RANDOM_SHAPE, dt)
    else:
        coo = rand_coo(g, RANDOM_SHAPE, dt, density=0.5)
        coo = torch.sparse_coo_tensor(coo.indices(), pick(g, SIGNED_GRAD, (coo._nnz(),), dt),
                                      RANDOM_SHAPE).coalesce()
        grad = coo_as_masked(coo) if grad_kind == "masked" else coo
    return [param, grad, uniform(g, RANDOM_SHAPE, dt, 0.5, 3.0)]


def param_neg_zero(ins, outs):
    if not neg_zeros(outs[0]):
        raise Surprise("no -0.0 in the updated param: the case does not test the sign of zero")


# ADA-7: float16 runs every path (each tensor op computed in float and
# rounded to half); integer and bool params are refused by the dense and
# sparse paths (the float update cannot be written back), uint8 also by
# the masked path (no uint8 MaskedTensor).
F16_TOL = "ulp:2"  # 3 of 19 cases 1 half-ulp off exact (weight decay, masked COO)
INT_DTYPES = {"i64": torch.int64, "i32": torch.int32, "i8": torch.int8, "u8": torch.uint8,
              "bool": torch.bool}


def int_inputs(grad_kind, g, dt):
    """The float32 random inputs (grad scaled by 3) cast to dt; a masked
    grad is the dense-storage form of the integer COO grad."""
    param, grad, state_sum = random_inputs("coo" if grad_kind == "masked" else grad_kind, g,
                                           torch.float32)
    if grad_kind == "dense":
        grad = (grad * 3).to(dt)
    else:
        grad = (grad.coalesce() * 3).to(dt)
        if grad_kind == "masked":
            grad = coo_as_masked(grad)
    return [param.to(dt), grad, state_sum.to(dt)]


def grad_layout(kind):
    """The layout token of a grad kind of ADAGRAD_RANDOM (coo_uncoalesced: coo)."""
    return "coo" if kind.startswith("coo") else kind


def dtype_cases():
    out = []
    for path, kind, variant, over in ADAGRAD_RANDOM:
        layout = grad_layout(kind)
        c = adagrad_case(path, layout, "f16", variant,
                         lambda g, k=kind: random_inputs(k, g, torch.float16),
                         dict(RANDOM_HP, **over), ("ADA-7",), compare_forms=False)
        c.tolerance = F16_TOL
        out.append(c)
    # bfloat16: the dense and sparse paths as float16's (each op in float,
    # rounded); the tutorial's masked path builds a MaskedTensor, which
    # refuses bfloat16 (its case is the refusal)
    for path, kind, variant, over in ADAGRAD_RANDOM:
        layout = grad_layout(kind)
        if path == "masked" and (kind, variant) != ("coo", "random"):
            continue
        err = "DTYPE_MISMATCH" if path == "masked" else None
        c = adagrad_case(path, layout, "bf16", "dtype_refused" if err else variant,
                         lambda g, k=kind: random_inputs(k, g, torch.bfloat16),
                         dict(RANDOM_HP, **over), ("ADA-7",), error_class=err,
                         error_match="bfloat16 is not supported in MaskedTensor" if err else None,
                         compare_forms=False)
        c.tolerance = F16_TOL
        out.append(c)
    for short, dt in INT_DTYPES.items():
        for path, kind in GRAD_KINDS:
            if dt == torch.uint8 and kind == "masked":
                continue  # no uint8 MaskedTensor to pass (the COO form records the refusal)
            build = (lambda k, dt: lambda g: int_inputs(k, g, dt))(kind, dt)
            # int64 on the masked path maximizes: the integer grad's negation
            # is its own code (optim_math.h), which nothing held (tests/sweep)
            maxi = short == "i64" and path == "masked"
            hp = dict(RANDOM_HP, maximize=True) if maxi else RANDOM_HP
            err = None
            try:
                PATHS[path].run(build(torch.Generator().manual_seed(0)), hp)
            except Exception:  # noqa: BLE001 - a dtype refusal, checked by the generator
                err = "DTYPE_MISMATCH"
            variant = "dtype_refused" if err else "random_maximize" if maxi else "random"
            out.append(adagrad_case(path, kind, short, variant,
                                    build, hp, ("ADA-7",), error_class=err,
                                    # grads truncated to 0 are masked in in the dense-storage
                                    # form, out in the COO form (mask = grad != 0): they differ
                                    compare_forms=False))
    return out


def cases():
    cases = dtype_cases()
    for path, layout in ((o.path, o.layout) for o in OPS.values()):
        cases += [
            adagrad_case(path, layout, "f32", "tutorial_step1",
                         lambda g, p=path: tutorial_inputs(p), TUTORIAL_HP, ("ADA-4",),
                         check=check_tutorial_step1),
            adagrad_case(path, layout, "f32", "tutorial_step2",
                         lambda g, p=path: tutorial_step2_inputs(p),
                         dict(TUTORIAL_HP, step=2), ("ADA-4",), check=check_tutorial_step2),
            adagrad_case(path, layout, "f32", "eps0_zero_accumulator",
                         lambda g, p=path: eps0_inputs(p), EPS0_HP, ("ADA-6",),
                         check=eps0_check(EPS0_NAN[path])),
        ]
    for short, dt in DTYPES.items():
        for path, kind, variant, over in ADAGRAD_RANDOM:
            layout = grad_layout(kind)
            cases.append(adagrad_case(
                path, layout, short, variant,
                lambda g, k=kind, dt=dt: random_inputs(k, g, dt), dict(RANDOM_HP, **over)))
        for path, kind, variant, over, first in ADAGRAD_ERRORS:
            cases.append(adagrad_case(
                path, kind, short, variant,
                lambda g, k=kind, dt=dt: random_inputs(k, g, dt), dict(RANDOM_HP, **over),
                ("ADA-5",), error_class="INVALID_ARGUMENT", error_match=first))
        for path, kind in GRAD_KINDS:
            cases.append(adagrad_case(
                path, kind, short, "signed_zeros",
                lambda g, k=kind, dt=dt: signed_zero_inputs(k, g, dt), RANDOM_HP,
                check=param_neg_zero,
                # the dense-storage grad's masked-in zeros are specified; the
                # COO form's mask (grad != 0) drops them: the forms differ
                compare_forms=False))
    cases += layout_cases()
    cases += lr_zero_cases()
    return check_ids(cases)


def lr_zero_cases():
    """ADA-5's boundary: `not 0.0 <= lr` refuses negatives and NaN only, so
    lr = 0 steps: the param stays, state_sum still accumulates (the sweep's
    optim.c:55, tests/sweep/README.md); the masked path (the tutorial's
    code, no Adagrad.__init__) takes it too. Last in the file, so no
    earlier case changes its poison number."""
    def check(ins, outs):
        if not torch.equal(as_dense(outs[0]), as_dense(ins[0])):
            raise Surprise("lr=0 moved the param")
        if torch.equal(as_dense(outs[1]), as_dense(ins[2])):
            raise Surprise("lr=0: state_sum did not accumulate: the case tests nothing")
    return [adagrad_case(path, grad_layout(kind), "f32", "random_lr_0",
                         lambda g, k=kind: random_inputs(k, g, torch.float32),
                         dict(RANDOM_HP, lr=0.0), ("ADA-5",) if path != "masked" else (),
                         check=check)
            for path, kind in GRAD_KINDS]


