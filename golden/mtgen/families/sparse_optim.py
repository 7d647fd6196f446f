"""Family sparse_optim: optimizers that take sparse gradients. sparse_adam
(torch.optim.SparseAdam, SADAM-1..5) and sgd (torch.optim.SGD, dense and
COO gradients and momentum buffers, SGD-1..4)."""
import torch

from ..inputs import rand_coo, randn, uniform
from ..model import ALL_DTYPES, Case, Surprise, check_ids, py

SHAPE = (6, 4)
DEFAULT_HP = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False, step=1)
RANDOM_HP = dict(lr=0.05, betas=(0.8, 0.95), eps=1e-8, maximize=False, step=3)
HP_KEYS = ("lr", "betas", "eps", "maximize", "step")
# Absolute tolerances, 8 units of the dtype's epsilon at magnitude 4 (the
# inputs' scale: |grad| <= ~3, exp_avg_sq <= 1 + grad^2): the moment updates
# m + (g - m) * (1 - b1) cancel, so their rounding error follows the
# operands, not the result (an ulp tolerance on the result would refuse an
# implementation that rounds once in a wider type). Our kernel rounds as
# torch does, op by op in the param dtype, and matches bit for bit.
TOL = {torch.float32: "abs:4e-6", torch.float64: "abs:8e-15", torch.float16: "abs:3e-2",
       getattr(torch, "bfloat16"): "abs:2.5e-1"}
FLOATS = {k: v for k, v in ALL_DTYPES.items() if v.is_floating_point}
REFUSED = {k: v for k, v in ALL_DTYPES.items() if not v.is_floating_point}


def lr_value(lr):
    """A Tensor lr is stored as the tuple of its elements (FLOAT_TENSOR)."""
    return torch.tensor(list(lr)) if isinstance(lr, tuple) else lr


def sparse_adam_torch(ins, hp):
    """torch.optim.SparseAdam, one step from a preset state: exp_avg and
    exp_avg_sq are the inputs, state['step'] = step - 1 (step() increments it
    before the bias correction)."""
    param, grad, exp_avg, exp_avg_sq = ins
    p = param.clone()
    opt = torch.optim.SparseAdam([p], lr=lr_value(hp["lr"]), betas=hp["betas"], eps=hp["eps"],
                                 maximize=hp["maximize"])
    state = opt.state[p]
    state["step"] = hp["step"] - 1
    state["exp_avg"] = exp_avg.clone()
    state["exp_avg_sq"] = exp_avg_sq.clone()
    p.grad = grad.clone()
    opt.step()
    return [p.detach(), state["exp_avg"], state["exp_avg_sq"]]


def torch_call(hp):
    lr = hp["lr"]
    lr = f"torch.tensor({list(lr)})" if isinstance(lr, tuple) else py(lr)
    kw = f"lr={lr}, " + ", ".join(f"{k}={py(hp[k])}" for k in HP_KEYS[1:4])
    return (f"opt = torch.optim.SparseAdam([param], {kw}); "
            f"opt.state[param].update(step={hp['step'] - 1}, exp_avg=exp_avg, "
            f"exp_avg_sq=exp_avg_sq); param.grad = grad; opt.step()")


# -- inputs [param, grad, exp_avg, exp_avg_sq]

def state(g, dt, shape=SHAPE):
    """exp_avg around 0, exp_avg_sq in [0.01, 1] (a variance)."""
    return [randn(g, shape, dt) * 0.1, uniform(g, shape, dt, 0.01, 1.0)]


def hybrid_grad(g, dt, rows=(0, 2, 5), duplicates=False, shape=SHAPE):
    """Embedding-shaped: sparse_dim 1, values [nnz, dim] (nn.Embedding's grad)."""
    rows = list(rows) + ([rows[0]] if duplicates else [])
    idx = torch.tensor([rows])
    t = torch.sparse_coo_tensor(idx, randn(g, (len(rows), shape[1]), dt), shape)
    return t if duplicates else t.coalesce()


def stored_zero_grad(dt):
    """Entries (0, 1) = 0 and (3, 2) = -0.0 are stored: present, so they move
    the moments (SADAM-1), though their gradient is zero."""
    idx = torch.tensor([[0, 1, 3, 4], [1, 0, 2, 3]])
    return torch.sparse_coo_tensor(idx, torch.tensor([0.0, 1.5, -0.0, -2.0], dtype=dt),
                                   SHAPE).coalesce()


def empty_grad(dt, sparse_dim=2):
    dense = SHAPE[sparse_dim:]
    return torch.sparse_coo_tensor(torch.zeros(sparse_dim, 0, dtype=torch.int64),
                                   torch.zeros((0, *dense), dtype=dt), SHAPE)


GRADS = {
    "coo": lambda g, dt: rand_coo(g, SHAPE, dt, density=0.4),
    "coo_uncoalesced": lambda g, dt: rand_coo(g, SHAPE, dt, density=0.3, duplicates=3),
    "hybrid": lambda g, dt: hybrid_grad(g, dt),
    "hybrid_uncoalesced": lambda g, dt: hybrid_grad(g, dt, duplicates=True),
    "stored_zeros": lambda g, dt: stored_zero_grad(dt),
    "empty": lambda g, dt: empty_grad(dt),
    "empty_hybrid": lambda g, dt: empty_grad(dt, sparse_dim=1),
}


def inputs(grad_kind, g, dt, fresh=False):
    param = randn(g, SHAPE, dt)
    grad = GRADS[grad_kind](g, dt)
    st = [torch.zeros(SHAPE, dtype=dt), torch.zeros(SHAPE, dtype=dt)] if fresh else state(g, dt)
    return [param, grad, *st]


# -- checks: torch must behave as the rules say, else the case table is wrong

def lazy_check(ins, outs):
    """SADAM-1: exactly the entries of the coalesced grad move (all three
    outputs may keep a value by chance; none may change elsewhere)."""
    param, grad, exp_avg, exp_avg_sq = ins
    touched = torch.zeros(SHAPE, dtype=torch.bool)
    gi = grad.coalesce().indices()
    touched[tuple(gi)] = True
    for name, before, after in (("param", param, outs[0]), ("exp_avg", exp_avg, outs[1]),
                                ("exp_avg_sq", exp_avg_sq, outs[2])):
        if not torch.equal(before[~touched], after[~touched]):
            raise Surprise(f"SparseAdam changed {name} outside the gradient's indices")


def unchanged_check(ins, outs):
    """SADAM-3: an empty gradient changes nothing."""
    for name, before, after in zip(("param", "exp_avg", "exp_avg_sq"), (ins[0], ins[2], ins[3]),
                                   outs):
        if not torch.equal(before, after):
            raise Surprise(f"SparseAdam with an empty gradient changed {name}")


def stored_zero_check(ins, outs):
    """SADAM-1: a stored zero is present: exp_avg moves at (0, 1)."""
    lazy_check(ins, outs)
    if torch.equal(ins[2][0, 1], outs[1][0, 1]):
        raise Surprise("a stored zero gradient did not move exp_avg: not 'present'")


def case(short, layout, variant, build, hp, rules, error=None, match=None, check=None):
    tol = TOL.get(ALL_DTYPES[short], "exact")  # integer params: refused
    return Case(id=f"sparse_adam.{layout}.{short}.{variant}", op="sparse_adam",
                rules=tuple(rules), tolerance=tol, build=build, run=sparse_adam_torch,
                torch_call=torch_call(hp), kwargs={k: hp[k] for k in HP_KEYS},
                error_class=error, error_match=match, check=check)


# (grad kind, variant, hp overrides, fresh state)
RANDOM = [
    ("coo", "random", {}, False),
    ("coo_uncoalesced", "random_uncoalesced", {}, False),
    ("hybrid", "random_hybrid", {}, False),
    ("hybrid_uncoalesced", "random_hybrid_uncoalesced", {}, False),
    ("coo", "random_maximize", {"maximize": True}, False),
    ("hybrid", "random_maximize_hybrid", {"maximize": True}, False),
    ("coo", "first_step_fresh_state", {"step": 1}, True),
    ("coo", "step_100", {"step": 100}, False),
    ("coo", "defaults", DEFAULT_HP, False),
    # eps = 0.5 against exp_avg_sq <= 1: sqrt(v) + eps and sqrt(v + eps) differ
    ("coo", "large_eps", {"eps": 0.5}, False),
    ("coo", "beta1_zero", {"betas": (0.0, 0.5)}, False),
    ("coo", "tensor_lr_one_element", {"lr": (0.05,)}, False),
]
# (variant, hp overrides, the first check torch makes): SparseAdam.__init__'s
# order is Tensor lr size, lr, eps, betas[0], betas[1]
HP_ERRORS = [
    ("zero_lr", {"lr": 0.0}, "Invalid learning rate"),
    ("negative_lr", {"lr": -0.01}, "Invalid learning rate"),
    ("nan_lr", {"lr": float("nan")}, "Invalid learning rate"),
    ("zero_eps", {"eps": 0.0}, "Invalid epsilon value"),
    ("beta1_one", {"betas": (1.0, 0.999)}, "Invalid beta parameter at index 0"),
    ("beta1_negative", {"betas": (-0.1, 0.999)}, "Invalid beta parameter at index 0"),
    ("beta2_one", {"betas": (0.9, 1.0)}, "Invalid beta parameter at index 1"),
    ("tensor_lr_two_elements", {"lr": (0.1, 0.2)}, "Tensor lr must be 1-element"),
    ("tensor_lr_two_elements_and_zero_eps", {"lr": (0.1, 0.2), "eps": 0.0},
     "Tensor lr must be 1-element"),
    ("zero_lr_and_zero_eps", {"lr": 0.0, "eps": 0.0}, "Invalid learning rate"),
    ("negative_eps_and_bad_beta2", {"eps": -1.0, "betas": (0.5, -1.0)},
     "Invalid epsilon value"),
    ("bad_beta1_and_beta2", {"betas": (1.5, 1.5)}, "Invalid beta parameter at index 0"),
]


# param.grad = grad refuses every compressed layout (torch 2.15: "attempting
# to assign a gradient to a tensor that has data of a different type"); 2 x 2
# blocks divide SHAPE
COMPRESSED_LAYOUTS = ("csr", "csc", "bsr", "bsc")


def compressed(t, layout):
    return getattr(t, f"to_sparse_{layout}")(*(((2, 2),) if layout in ("bsr", "bsc") else ()))


def layout_errors(short, dt):
    """SADAM-5: what torch refuses about the layouts, shapes and dtypes."""
    def dense_grad(g):
        return [randn(g, SHAPE, dt), randn(g, SHAPE, dt), *state(g, dt)]

    def compressed_grad(layout):
        return lambda g: [randn(g, SHAPE, dt), compressed(randn(g, SHAPE, dt), layout),
                          *state(g, dt)]

    def coo_param(g):
        return [rand_coo(g, SHAPE, dt), rand_coo(g, SHAPE, dt), *state(g, dt)]

    def shape_mismatch(g):
        return [randn(g, SHAPE, dt), rand_coo(g, (7, 4), dt), *state(g, dt)]

    def dtype_mismatch(g):
        other = torch.float64 if dt != torch.float64 else torch.float32
        return [randn(g, SHAPE, dt), rand_coo(g, SHAPE, other), *state(g, dt)]

    hp = RANDOM_HP
    return [
        case(short, "dense", "dense_grad", dense_grad, hp, ("SADAM-5",), "LAYOUT_MISMATCH",
             "SparseAdam does not support dense gradients"),
        *(case(short, layout, f"{layout}_grad", compressed_grad(layout), hp, ("SADAM-5",),
               "LAYOUT_MISMATCH", "a gradient to a tensor that has data of a different type")
          for layout in COMPRESSED_LAYOUTS),
        case(short, "coo_coo", "sparse_param", coo_param, hp, ("SADAM-5",), "LAYOUT_MISMATCH",
             "SparseAdam requires dense parameter tensors"),
        case(short, "coo", "shape_mismatch", shape_mismatch, hp, ("SADAM-5",),
             "SHAPE_MISMATCH", "attempting to assign a gradient of size"),
        case(short, "coo", "dtype_mismatch", dtype_mismatch, hp, ("SADAM-5",),
             "DTYPE_MISMATCH", "attempting to assign a gradient with dtype"),
    ]


def refused_dtype(short, dt):
    """SADAM-5: integer and bool params: torch's update has no kernel for
    them (the float step size cannot be cast back; bool cannot subtract)."""
    def build(g):
        p = torch.randint(0, 3, SHAPE, generator=g).to(dt)
        idx = torch.tensor([[0, 2], [1, 3]])
        grad = torch.sparse_coo_tensor(idx, torch.ones(2, dtype=dt), SHAPE).coalesce()
        return [p, grad, torch.zeros(SHAPE, dtype=dt), torch.zeros(SHAPE, dtype=dt)]
    match = "Subtraction" if dt == torch.bool else "can't be cast to the desired output type"
    return case(short, "coo", "dtype_refused", build, RANDOM_HP, ("SADAM-5",),
                "DTYPE_MISMATCH", match)


# ---- sgd: inputs [param, grad] or [param, grad, momentum_buffer] ----------------

SGD_KEYS = ("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize")
SGD_HP = dict(lr=0.05, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
              maximize=False)


def sgd_torch(ins, hp):
    """torch.optim.SGD (single-tensor path), one step; a third input is the
    momentum buffer a previous step left (absent: the first step). Outputs
    [param] without momentum, [param, momentum_buffer] with it."""
    param, grad = ins[0], ins[1]
    p = param.clone()
    opt = torch.optim.SGD([p], foreach=False, **{k: hp[k] for k in SGD_KEYS})
    if len(ins) > 2:
        opt.state[p]["momentum_buffer"] = ins[2].clone()
    p.grad = grad.clone()
    opt.step()
    if hp["momentum"] == 0:
        return [p.detach()]
    return [p.detach(), opt.state[p]["momentum_buffer"]]


def sgd_call(hp, has_buf):
    kw = ", ".join(f"{k}={py(hp[k])}" for k in SGD_KEYS)
    buf = "opt.state[param]['momentum_buffer'] = momentum_buffer; " if has_buf else ""
    return (f"opt = torch.optim.SGD([param], {kw}, foreach=False); {buf}"
            f"param.grad = grad; opt.step()")


def rnd(g, shape, dt):
    """randn in any dtype: integers and bool from float draws scaled by 3."""
    if dt.is_floating_point:
        return randn(g, shape, dt)
    return (randn(g, shape, torch.float32) * 3).to(dt)


SGD_GRADS = dict(GRADS, dense=lambda g, dt: rnd(g, SHAPE, dt),
                 hybrid_int=lambda g, dt: (hybrid_grad(g, torch.float32) * 3).to(dt),
                 coo=lambda g, dt: rand_coo(g, SHAPE, torch.float32, density=0.4).to(dt)
                 if not dt.is_floating_point else rand_coo(g, SHAPE, dt, density=0.4))
SGD_BUFS = {
    None: None,
    "dense": lambda g, dt: randn(g, SHAPE, dt),
    "coo": lambda g, dt: rand_coo(g, SHAPE, dt, density=0.25),
    "coo_uncoalesced": lambda g, dt: rand_coo(g, SHAPE, dt, density=0.25, duplicates=2),
    "hybrid": lambda g, dt: hybrid_grad(g, dt, rows=(1, 2)),
}


# SGD-5: sparse params (torch.optim.SGD takes them: every update is a
# sparse + sparse add); the param's layout is the first of the case id's
SGD_PARAMS = {
    "coo": lambda g, dt: rand_coo(g, SHAPE, dt, density=0.4),
    "coo_uncoalesced": lambda g, dt: rand_coo(g, SHAPE, dt, density=0.3, duplicates=2),
    "hybrid": lambda g, dt: hybrid_grad(g, dt, rows=(1, 2, 4)),
}


def sgd_case(short, grad_kind, buf_kind, variant, over, rules, error=None, match=None,
             param_kind=None):
    dt = ALL_DTYPES[short]
    hp = dict(SGD_HP, **over)

    def build(g, dt=dt):
        param = rnd(g, SHAPE, dt) if param_kind is None else SGD_PARAMS[param_kind](g, dt)
        ins = [param, SGD_GRADS[grad_kind](g, dt)]
        if buf_kind is not None:
            ins.append(SGD_BUFS[buf_kind](g, dt))
        return ins
    layout = ("" if param_kind is None else "coo_") + \
        ("coo" if grad_kind.startswith(("coo", "hybrid", "stored", "empty")) else "dense") + \
        ("" if buf_kind is None else "_" + ("dense" if buf_kind == "dense" else "coo"))
    return Case(id=f"sgd.{layout}.{short}.{variant}", op="sgd", rules=tuple(rules),
                tolerance=TOL.get(dt, "exact"), build=build, run=sgd_torch,
                torch_call=sgd_call(hp, buf_kind is not None),
                kwargs={k: hp[k] for k in SGD_KEYS}, error_class=error, error_match=match)


M = {"momentum": 0.9}
# (grad kind, buffer kind, variant, hp overrides, rules)
SGD_ROWS = [
    ("dense", None, "plain", {}, ("SGD-1",)),
    ("dense", None, "maximize", {"maximize": True}, ("SGD-1",)),
    ("dense", None, "weight_decay", {"weight_decay": 0.1}, ("SGD-1",)),
    ("coo", None, "plain", {}, ("SGD-1",)),
    ("coo_uncoalesced", None, "uncoalesced", {}, ("SGD-1",)),
    ("hybrid", None, "hybrid", {}, ("SGD-1",)),
    ("hybrid_uncoalesced", None, "hybrid_uncoalesced", {}, ("SGD-1",)),
    ("coo", None, "maximize", {"maximize": True}, ("SGD-1",)),
    ("stored_zeros", None, "stored_zeros", {}, ("SGD-1",)),
    ("empty", None, "empty", {}, ("SGD-1",)),
    # momentum: the first step clones the gradient into the buffer
    ("dense", None, "momentum_first_step", M, ("SGD-2",)),
    ("coo", None, "momentum_first_step", M, ("SGD-2",)),
    ("coo_uncoalesced", None, "momentum_first_step_uncoalesced", M, ("SGD-2",)),
    ("empty", None, "momentum_first_step_empty", M, ("SGD-2",)),
    # later steps: buf = buf * momentum + (1 - dampening) * grad
    ("dense", "dense", "momentum", M, ("SGD-2",)),
    ("dense", "dense", "momentum_dampening", dict(M, dampening=0.25), ("SGD-2",)),
    ("dense", "dense", "nesterov", dict(M, nesterov=True), ("SGD-2",)),
    ("dense", "dense", "momentum_weight_decay_maximize",
     dict(M, weight_decay=0.1, maximize=True), ("SGD-2",)),
    ("coo", "coo", "momentum", M, ("SGD-2",)),
    ("coo", "coo", "momentum_dampening", dict(M, dampening=0.25), ("SGD-2",)),
    ("coo", "coo", "nesterov", dict(M, nesterov=True), ("SGD-2",)),
    ("coo_uncoalesced", "coo_uncoalesced", "momentum_uncoalesced", M, ("SGD-2",)),
    ("hybrid", "hybrid", "momentum_hybrid", M, ("SGD-2",)),
    ("coo", "dense", "momentum", M, ("SGD-2",)),
    # refusals of sparse + dense (torch's add(sparse, dense))
    ("coo", None, "weight_decay", {"weight_decay": 0.1}, ("SGD-3",)),
    ("dense", "coo", "momentum", M, ("SGD-3",)),
    ("coo", "dense", "weight_decay", dict(M, weight_decay=0.1), ("SGD-3",)),
    ("coo", "dense", "nesterov", dict(M, nesterov=True), ("SGD-3",)),
    ("dense", "coo", "nesterov", dict(M, nesterov=True), ("SGD-3",)),
]
SGD_ERRORS = [  # SGD.__init__'s checks, in its order
    ("negative_lr", {"lr": -0.1}, "Invalid learning rate"),
    ("negative_momentum", {"momentum": -0.1}, "Invalid momentum value"),
    ("negative_weight_decay", {"weight_decay": -0.1}, "Invalid weight_decay value"),
    ("nesterov_without_momentum", {"nesterov": True}, "Nesterov momentum requires"),
    ("nesterov_with_dampening", dict(M, nesterov=True, dampening=0.1),
     "Nesterov momentum requires"),
    ("negative_lr_and_momentum", {"lr": -0.1, "momentum": -0.1}, "Invalid learning rate"),
]


def sgd_grad_errors(dt):
    """SGD-4: what `param.grad = grad` refuses (torch checks the dtype, then
    the layout, then the size)."""
    other = torch.float64 if dt != torch.float64 else torch.float32
    return [
        *((layout, f"{layout}_grad",
           lambda g, layout=layout: [randn(g, SHAPE, dt), compressed(randn(g, SHAPE, dt), layout)],
           "LAYOUT_MISMATCH", "a gradient to a tensor that has data of a different type")
          for layout in COMPRESSED_LAYOUTS),
        ("coo", "shape_mismatch", lambda g: [randn(g, SHAPE, dt), rand_coo(g, (7, 4), dt)],
         "SHAPE_MISMATCH", "attempting to assign a gradient of size"),
        ("coo", "dtype_mismatch", lambda g: [randn(g, SHAPE, dt), rand_coo(g, SHAPE, other)],
         "DTYPE_MISMATCH", "attempting to assign a gradient with dtype"),
        ("csr", "dtype_and_layout_mismatch",
         lambda g: [randn(g, SHAPE, dt), randn(g, SHAPE, other).to_sparse_csr()],
         "DTYPE_MISMATCH", "attempting to assign a gradient with dtype"),
    ]


# (param kind, grad kind, buffer kind, variant, hp overrides, error class, match)
SGD_SPARSE_PARAM_ROWS = [
    ("coo", "coo", None, "sparse_param", {}, None, None),
    ("coo", "coo_uncoalesced", None, "sparse_param_grad_uncoalesced", {}, None, None),
    ("coo_uncoalesced", "coo", None, "sparse_param_uncoalesced", {}, None, None),
    ("coo", "coo", None, "sparse_param_weight_decay_maximize",
     {"weight_decay": 0.1, "maximize": True}, None, None),
    ("coo", "empty", None, "sparse_param_empty_grad", {}, None, None),
    ("hybrid", "hybrid", None, "sparse_param_hybrid", {}, None, None),
    ("coo", "coo", None, "sparse_param_momentum_first_step", M, None, None),
    ("coo", "coo", "coo", "sparse_param_nesterov", dict(M, nesterov=True), None, None),
    ("coo", "dense", None, "sparse_param_dense_grad", {}, "LAYOUT_MISMATCH",
     "a gradient to a tensor that has data of a different type"),
]


def sgd_cases():
    out = []
    for short, dt in FLOATS.items():
        for pk, gk, bk, variant, over, err, match in SGD_SPARSE_PARAM_ROWS:
            # momentum and Nesterov steps are SGD-2's too, on sparse operands
            rules = ("SGD-5", "SGD-2") if over.get("momentum") else ("SGD-5",)
            if err is None and dt == torch.float16 and gk != "empty":
                # sparse + sparse has no float16 kernel (an empty operand needs none)
                rules, err, match = ("SGD-5", "SGD-4"), "DTYPE_MISMATCH", \
                    '"cadd_sparse" not implemented for \'Half\''
            out.append(sgd_case(short, gk, bk, variant, over, rules, err, match, param_kind=pk))
        for grad_kind, buf_kind, variant, over, rules in SGD_ROWS:
            err = "LAYOUT_MISMATCH" if "SGD-3" in rules else None
            match = "add(sparse, dense) is not supported" if err else None
            if err is None and dt == torch.float16 and grad_kind != "dense" and \
                    buf_kind not in (None, "dense"):
                # sparse + sparse: torch's CPU kernel has no float16 (bfloat16 has one)
                rules, err, match = rules + ("SGD-4",), "DTYPE_MISMATCH", \
                    '"cadd_sparse" not implemented for \'Half\''
            out.append(sgd_case(short, grad_kind, buf_kind, variant, over, rules, err, match))
        for layout, variant, build, err, match in sgd_grad_errors(dt):
            out.append(Case(id=f"sgd.{layout}.{short}.{variant}", op="sgd", rules=("SGD-4",),
                            tolerance=TOL.get(dt, "exact"), build=build, run=sgd_torch,
                            torch_call=sgd_call(SGD_HP, False),
                            kwargs={k: SGD_HP[k] for k in SGD_KEYS}, error_class=err,
                            error_match=match))
    for variant, over, first in SGD_ERRORS:
        out.append(sgd_case("f32", "coo", None, f"invalid_{variant}", over, ("SGD-4",),
                            "INVALID_ARGUMENT", first))
    # integers: a dense gradient is refused (a float alpha with an integral
    # tensor); a COO gradient leaves the param as it is when torch's cast of
    # alpha = -lr to the integer type gives 0, and adds -2 * grad at lr 2
    for short, dt in REFUSED.items():
        out.append(sgd_case(short, "dense", None, "dtype_refused", {}, ("SGD-4",),
                            "DTYPE_MISMATCH", "argument alpha must not be a floating point"))
        if dt == torch.uint8:  # -lr does not fit uint8: the cast itself is refused
            out.append(sgd_case(short, "coo", None, "alpha_overflows", {}, ("SGD-4",),
                                "INVALID_ARGUMENT", "cannot be converted to type uint8_t"))
        else:
            out.append(sgd_case(short, "coo", None, "alpha_truncated", {}, ("SGD-1",)))
            # lr 2: alpha -2 survives the cast, so the param moves
            out.append(sgd_case(short, "coo", None, "lr_2", {"lr": 2.0}, ("SGD-1",)))
    # a hybrid integer gradient (rows of values: tests/sweep found a mutant of
    # the integer step's row offset that no case reached). After the rest, so
    # that nothing earlier moves
    for short, dt in REFUSED.items():
        if dt != torch.uint8:
            out.append(sgd_case(short, "hybrid_int", None, "hybrid_lr_2", {"lr": 2.0},
                                ("SGD-1",)))
    return out


def cases():
    out = sgd_cases()
    for short, dt in FLOATS.items():
        for kind, variant, over, fresh in RANDOM:
            layout = "coo"
            rules = ["SADAM-1", "SADAM-2"]
            out.append(case(short, layout, variant,
                            lambda g, k=kind, dt=dt, f=fresh: inputs(k, g, dt, f),
                            dict(RANDOM_HP, **over), rules, check=lazy_check))
        out.append(case(short, "coo", "stored_zeros",
                        lambda g, dt=dt: inputs("stored_zeros", g, dt), RANDOM_HP,
                        ("SADAM-1", "SADAM-2"), check=stored_zero_check))
        for kind in ("empty", "empty_hybrid"):
            out.append(case(short, "coo", kind,
                            lambda g, k=kind, dt=dt: inputs(k, g, dt), RANDOM_HP,
                            ("SADAM-3",), check=unchanged_check))
        out += layout_errors(short, dt)
    for variant, over, first in HP_ERRORS:
        out.append(case("f32", "coo", f"invalid_{variant}",
                        lambda g: inputs("coo", g, torch.float32), dict(RANDOM_HP, **over),
                        ("SADAM-4",), "INVALID_ARGUMENT", first))
    for short, dt in REFUSED.items():
        out.append(refused_dtype(short, dt))
    return check_ids(out)
