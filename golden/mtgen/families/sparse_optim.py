"""Family sparse_optim: optimizers that take sparse gradients. sparse_adam
(torch.optim.SparseAdam, SADAM-1..5)."""
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


def layout_errors(short, dt):
    """SADAM-5: what torch refuses about the layouts, shapes and dtypes."""
    def dense_grad(g):
        return [randn(g, SHAPE, dt), randn(g, SHAPE, dt), *state(g, dt)]

    def csr_grad(g):
        return [randn(g, SHAPE, dt), randn(g, SHAPE, dt).to_sparse_csr(), *state(g, dt)]

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
        case(short, "csr", "csr_grad", csr_grad, hp, ("SADAM-5",), "LAYOUT_MISMATCH",
             "a gradient to a tensor that has data of a different type"),
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


def cases():
    out = []
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
