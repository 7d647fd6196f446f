#!/usr/bin/env python3
"""mtcs adapter: PyTorch itself (MaskedTensor, torch.masked, torch.sparse,
torch.optim) as the library under test, for the `torch` profile.

    mtcs validate --adapter ".venv/bin/python conformance/adapters/torch_masked.py" \\
        --require-all --level strict

Every op of spec/include/mt/ops.def is replayed from the request alone (op,
inputs, kwargs: spec/adapter-protocol.md): this is an independent replay of
the calls the goldens record in `torch_call`, written from DESIGN.md's op
conventions, not imported from golden/mtgen. Run with the torch that
golden/requirements.txt pins, it must reproduce every golden of the torch
profile; a case it fails is version drift, non-determinism, or a gap in the
protocol or its encoding, never an accepted difference.

How an op becomes a call (first match wins):
  1. CALLS: an explicit entry, for ops whose call is not the generic one
     (optimizers, torch.masked._ops, torch.sparse.*, list arguments,
     indexing, aten ops, Python results such as bools);
  2. METHODS, and every name ending in `_` (in-place): a Tensor method,
     `inputs[0].<op>(*inputs[1:], **kwargs)`;
  3. otherwise `getattr(torch, op)(*inputs, **kwargs)`.
POSITIONAL names the kwargs that a call passes positionally (the way the
golden's torch_call does; MaskedTensor's Python overrides do not all take
keywords). Kwargs arrive as numpy values from the request file; `_kwargs`
turns them into what torch takes (ints, bools, tuples, torch.dtype,
torch.layout). torch's exceptions become statuses through TORCH_REFUSALS
(torch's messages as the goldens class them, some per op family), then
mtcs_adapter.status_of. A 2-d CSR/CSC result is written with its indices
sorted within each row (the golden format requires it; torch's CPU sparse @
sparse leaves them unsorted).

Needs torch, numpy, h5py and conformance/adapters/mtcs_adapter.py (the
protocol loop); exits 0 on EOF of stdin."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.masked._ops as masked_ops  # noqa: E402
from torch.masked import MaskedTensor, masked_tensor  # noqa: E402

import mtcs_adapter  # noqa: E402

DTYPES = {"float16": torch.float16, "float32": torch.float32, "float64": torch.float64,
          "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
          "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool}
LAYOUTS = {"strided": torch.strided, "sparse_coo": torch.sparse_coo,
           "sparse_csr": torch.sparse_csr, "sparse_csc": torch.sparse_csc,
           "sparse_bsr": torch.sparse_bsr, "sparse_bsc": torch.sparse_bsc}


def _value(name, v):
    """One kwarg as torch takes it. A wrong type stays wrong (a tuple where
    torch wants an int): the INVALID_ARGUMENT cases rely on torch refusing
    what the golden stored."""
    if isinstance(v, bytes):
        v = v.decode()
    if isinstance(v, str):
        if name == "dtype":
            return DTYPES.get(v, v)
        if name == "layout":
            return LAYOUTS.get(v, v)
        return v
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return _value(name, v[()])
        return tuple(x.item() for x in v.reshape(-1))
    if isinstance(v, (list, tuple)):
        return tuple(x.item() if isinstance(x, np.generic) else x for x in v)
    if isinstance(v, np.generic):
        return v.item()
    return v


def _kwargs(kw):
    return {k: _value(k, v) for k, v in kw.items()}


# -- torch's refusals as statuses

def _op_families():
    """{op: family} from spec/include/mt/ops.def (beside this checkout), or {}."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, os.pardir, os.pardir, "spec", "include", "mt", "ops.def")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return {}
    return dict(re.findall(r"^\s*MT_OP\(\s*\d+\s*,\s*(\w+)\s*,\s*(\w+)\s*,", text, re.M))


FAMILIES = _op_families()
SPARSE_FAMILIES = ("sparse_blas", "sparse_convert", "sparse_misc")

# torch's messages -> status, first match wins, before mtcs_adapter.status_of
# (DESIGN.md's error_class table, which knows the generic words). Each entry:
# (status, needles, families it applies to or None for every op). torch words
# one refusal differently per op, and the same words (a conversion "is not
# supported") are a layout refusal inside an arithmetic op (mul of a 3-d COO)
# but a refused argument value of a conversion (to_sparse_csr(dense_dim=1)):
# hence the families.
TORCH_REFUSALS = (
    # a conversion's argument torch refuses (dense_dim, blocksize, sparse_dim, batches)
    ("INVALID_ARGUMENT", ("argument given is not supported", "for batched inputs is not supported",
                          "with blocksize changed", "sparse_dim argument !=",
                          "for input tensors with sparse_dim()!=",
                          "on a non-empty sparse tensor is not supported"),
     ("sparse_convert", "structure", "sparse_misc")),
    ("DTYPE_MISMATCH", ("on a bool tensor is not supported", "with two bool tensors",
                        "operator, on a bool tensor", "mask must have dtype bool",
                        "Expected a floating point or complex tensor as input",
                        "input dtype should be either floating point",
                        "dtype should be floating point or complex",
                        "should be convertible without narrowing", "expected scalar type",
                        "attempting to assign a gradient with dtype",
                        "must match dtype of sparse tensor", "Expected self to be a floating-point",
                        "to have the same dtype"), None),
    # SGD's integer params: torch's add_(alpha=-lr) refusal is the dtype's
    ("DTYPE_MISMATCH", ("argument alpha must not be a floating point number",), ("sparse_optim",)),
    ("DTYPE_MISMATCH", ("Can't convert result type",), None),
    ("SHAPE_MISMATCH", ("operands have incompatible sizes",), None),
    ("SHAPE_MISMATCH", ("data.size() must equal mask.size()",), ("masked",)),
    ("LAYOUT_MISMATCH", ("reduction operations on CSR tensors with keepdim=False",),
     ("masked_fn",)),
    ("SHAPE_MISMATCH", ("must match the existing size", "attempting to assign a gradient of size",
                        "Expected dim 0 size", "Expected dim 1 size", "bmm_sparse: 'self.size(",
                        "size mismatch, got input", "expected self.size(-1) == vec.size(-1)",
                        "expected sizes of 'self' and 'other' to match",
                        "to have same size, but self has size",
                        "expects sparse inputs with equal dimensionality",
                        "doesn't match the broadcast shape",
                        "All tensors must have the same shape",
                        "must have the same sparse_dim and dense_dim",
                        "is invalid for input of size",
                        "stack expects each tensor to be equal size",
                        "maximum size for tensor at dimension"), None),
    ("INDEX_OUT_OF_RANGE", ("0 <= col_indices <", "0 <= row_indices <", "found negative index",
                            "size is inconsistent with indices"), None),
    ("LAYOUT_MISMATCH", ("attempting to assign a gradient to a tensor that has data of a different",
                         "computation on CPU is not implemented", "tensor layout but got",
                         "Sparse division requires a scalar or zero-dim dense tensor divisor",
                         "Expected result Tensor to be of format CSR", "expected either 'mat1'",
                         "SparseAdam requires dense parameter tensors",
                         "SparseAdam does not support dense gradients",
                         "expected SparseCsr or SparseCsc layout",
                         "Only batched sparse compressed (non-block) tensors",
                         "INTERNAL ASSERT FAILED", "expects explicit mask for",
                         "expects strided tensor", "expects strided or sparse_csr tensor",
                         "expects strided tensors", "mask.dense_dim() must match input.dense_dim()",
                         "resize_reduction: support for output with",
                         "expected strided result tensor", "operation not supported for mat",
                         "must be dense", "MKL Sparse doesn't support", "MKL error",
                         "Expected result to have sparse csr layout", "to have strided layout",
                         "__torch_dispatch__ handlers returned NotImplemented",
                         "Cannot get values on an uncoalesced tensor",
                         "Concatenating sparse tensors, but a dense tensor",
                         "between dense and sparse Tensors is not implemented",
                         "memory format option is only supported by strided tensors"), None),
)


# torch's refusals of a backward (gradient cases, GRAD-5, SPG-2, MFG-4), checked
# first for a gradient request: MaskedTensor or a sparse layout lacks what the
# derivative formula needs while strided tensors have it (DESIGN.md's
# "combination of layouts is refused"), or the op has no derivative there.
GRAD_REFUSALS = (
    ("INVALID_ARGUMENT", ("derivative for aten::floor_divide", "len(kwargs) must equal 0",
                          "returned a gradient different than None",
                          "data.size() must equal mask.size()")),
    ("LAYOUT_MISMATCH", ("__torch_dispatch__ handlers returned NotImplemented",
                         "do not support additional Tensor arguments",
                         "maximum recursion depth exceeded", "object has no attribute 'layout'",
                         "do not have is_non_overlapping_and_dense", "derivative for aten::",
                         "returned an invalid gradient", "add(sparse, dense) is not supported",
                         "op2-sparse addition", "Sparse division requires",
                         "memory format option", "computation on CPU is not implemented",
                         "operation not supported for mat", "Expected result Tensor to be of format",
                         "expand is unsupported", "tensor layout but got", "layout must be",
                         "expected SparseCsr or SparseCsc layout",
                         "sparse_dim()!=2 is not supported", "must have the same layout",
                         "Could not run 'aten::")),
)


def grad_status_of(op, exc):
    """(status, message) of torch's exception exc raised by op's backward."""
    text = f"{type(exc).__name__}: {exc}"
    for status, needles in GRAD_REFUSALS:
        if any(s in text for s in needles):
            return status, text
    return status_of(op, exc)


def status_of(op, exc):
    """(status, message) of torch's exception exc raised by op."""
    text = f"{type(exc).__name__}: {exc}"
    family = FAMILIES.get(op)
    for status, needles, families in TORCH_REFUSALS:
        if families is not None and family not in families:
            continue
        if any(s in text for s in needles):
            return status, text
    return mtcs_adapter.status_of(exc)


# -- optimizers: one step from a preset state (DESIGN.md, golden-format.md)

def _scalar_dtype():
    """torch.optim keeps `step` as a tensor of this dtype (float32 on CPU)."""
    try:
        from torch.optim.optimizer import _get_scalar_dtype
        return _get_scalar_dtype()
    except ImportError:  # older torch
        return torch.float32


def adagrad_optim(ins, kw):
    """adagrad_dense / adagrad_sparse: torch.optim.Adagrad, single-tensor
    path, with state['sum'] = state_sum and state['step'] = step - 1
    (Adagrad increments it before use). Outputs [param, state_sum, std]:
    std = sqrt(new sum) + eps, dense for a dense grad, COO over the
    coalesced grad's indices for a COO grad (what _make_sparse builds)."""
    param, grad, state_sum = ins
    eps, step = kw.pop("eps", 1e-10), kw.pop("step", 1)
    p = param.clone()
    opt = torch.optim.Adagrad([p], eps=eps, foreach=False, **kw)
    state = opt.state[p]
    if not state:  # torch versions that create the state lazily
        state["step"] = torch.tensor(0.0, dtype=_scalar_dtype())
        state["sum"] = torch.full_like(p, 0.0, memory_format=torch.preserve_format)
    state["sum"].copy_(state_sum)
    state["step"].fill_(step - 1)
    p.grad = grad.clone()
    opt.step()
    new_sum = state["sum"]
    if grad.layout == torch.sparse_coo:
        on = new_sum.sparse_mask(grad.coalesce())
        std = torch.sparse_coo_tensor(on.indices(), on.values().sqrt().add(eps),
                                      on.shape).coalesce()
    else:
        std = new_sum.sqrt().add(eps)
    return [p.detach(), new_sum.clone(), std]


def adagrad_masked(ins, kw):
    """adagrad_masked: the MaskedTensor Adagrad of torch's sparse-semantics
    tutorial. A COO grad is masked by its non-zero values; a masked grad
    keeps its own mask. The learning rate decays as torch.optim.Adagrad's
    (clr = lr / (1 + (step - 1) * lr_decay)); maximize negates the grad.
    Outputs [param, state_sum, std], std masked."""
    param, grad, state_sum = ins
    lr, lr_decay = kw.get("lr", 1e-2), kw.get("lr_decay", 0.0)
    eps, step = kw.get("eps", 1e-10), kw.get("step", 1)
    clr = lr / (1 + (step - 1) * lr_decay)
    if kw.get("weight_decay", 0.0) != 0:
        raise mtcs_adapter.Refusal("NOT_SUPPORTED",
                                   "the tutorial's masked Adagrad has no weight_decay")
    if isinstance(grad, MaskedTensor):
        mgrad = -grad if kw.get("maximize", False) else grad
        mask = mgrad.get_mask()
        state_sum = state_sum + mgrad.pow(2).to_tensor(0)
        std = masked_tensor(state_sum, mask).sqrt().add(eps)
        param = param.add((mgrad / std).to_tensor(0), alpha=-clr)
    else:
        grad = -grad if kw.get("maximize", False) else grad
        mask = (grad.to_dense() != 0).to_sparse()
        mgrad = masked_tensor(grad, mask)
        state_sum = state_sum + mgrad.pow(2).get_data()
        std = masked_tensor(state_sum.to_sparse(), mask).sqrt().add(eps)
        param = param.add((mgrad / std).get_data(), alpha=-clr)
    return [param, state_sum, std]


def sparse_adam(ins, kw):
    """torch.optim.SparseAdam one step: inputs [param, grad, exp_avg,
    exp_avg_sq], state['step'] = step - 1; outputs [param, exp_avg,
    exp_avg_sq]. A tuple lr is a 1-d Tensor lr (FLOAT_TENSOR)."""
    param, grad, exp_avg, exp_avg_sq = ins
    step = kw.pop("step", 1)
    if isinstance(kw.get("lr"), tuple):
        kw["lr"] = torch.tensor(list(kw["lr"]))
    p = param.clone()
    opt = torch.optim.SparseAdam([p], **kw)
    state = opt.state[p]
    state["step"] = step - 1
    state["exp_avg"] = exp_avg.clone()
    state["exp_avg_sq"] = exp_avg_sq.clone()
    p.grad = grad.clone()
    opt.step()
    return [p.detach(), state["exp_avg"], state["exp_avg_sq"]]


def sgd(ins, kw):
    """torch.optim.SGD one step; a third input is the momentum buffer of a
    previous step. Outputs [param], plus the momentum buffer when momentum
    is not 0."""
    p = ins[0].clone()
    opt = torch.optim.SGD([p], foreach=False, **kw)
    if len(ins) > 2:
        opt.state[p]["momentum_buffer"] = ins[2].clone()
    p.grad = ins[1].clone()
    opt.step()
    if kw.get("momentum", 0) == 0:
        return [p.detach()]
    return [p.detach(), opt.state[p]["momentum_buffer"]]


# -- torch.masked's functional ops: inputs [input, mask] or [input];
#    logaddexp [input, other] or [input, other, input_mask, other_mask]

def masked_fn(name):
    fn = getattr(masked_ops, name)
    if name == "logaddexp":
        def call(ins, kw):
            if len(ins) == 4:
                kw = dict(kw, input_mask=ins[2], other_mask=ins[3])
            return [fn(ins[0], ins[1], **kw)]
        return call

    def call(ins, kw):
        if len(ins) > 1:
            kw = dict(kw, mask=ins[1])
        return [fn(ins[0], **kw)]
    return call


MASKED_FNS = ("sum", "prod", "amin", "amax", "argmin", "argmax", "mean", "median", "norm",
              "var", "std", "logsumexp", "cumsum", "cumprod", "softmax", "log_softmax",
              "softmin", "normalize", "logaddexp")


def one(fn):
    """fn(*inputs, **kwargs) -> one output."""
    return lambda ins, kw: [fn(*ins, **kw)]


CALLS = {
    "masked_tensor": one(masked_tensor),
    "adagrad_dense": adagrad_optim,
    "adagrad_sparse": adagrad_optim,
    "adagrad_masked": adagrad_masked,
    "sparse_adam": sparse_adam,
    "sgd": sgd,
    # torch.sparse's functions of a name torch also has (DESIGN.md: sparse_*)
    "sparse_mm": one(torch.sparse.mm),
    "sparse_addmm": one(torch.sparse.addmm),
    "sparse_sampled_addmm": one(torch.sparse.sampled_addmm),
    "sparse_softmax": one(torch.sparse.softmax),
    "sparse_log_softmax": one(torch.sparse.log_softmax),
    "sparse_sum": one(torch.sparse.sum),
    "linear": one(torch.nn.functional.linear),
    # index tensors are inputs, dim a kwarg: torch takes (input, dim, index)
    "index_select": lambda ins, kw: [torch.index_select(ins[0], kw.pop("dim"), ins[1], **kw)],
    # list arguments: every input is an element of the list
    "cat": lambda ins, kw: [torch.cat(list(ins), **kw)],
    "stack": lambda ins, kw: [torch.stack(list(ins), **kw)],
    "split": lambda ins, kw: list(torch.split(ins[0], **kw)),
    "index": lambda ins, kw: [ins[0][ins[1]]],
    "slice": lambda ins, kw: [torch.ops.aten.slice.Tensor(ins[0], **kw)],
    "is_contiguous": lambda ins, kw: [bool(ins[0].is_contiguous(**kw))],
    "is_same_size": lambda ins, kw: [bool(ins[0].is_same_size(*ins[1:], **kw))],
}
for _name in MASKED_FNS:
    CALLS["masked_" + _name] = masked_fn(_name)

# Tensor methods whose torch.<op> function is absent or is not the call
# the goldens make (to_tensor, coalesce, values, ...); names ending in `_`
# are methods too.
METHODS = {
    "to_tensor", "to_dense", "to_sparse", "to_sparse_csr", "to_sparse_coo", "to_sparse_csc",
    "to_sparse_bsr", "to_sparse_bsc", "coalesce", "sparse_mask", "values", "indices",
    "_indices", "_values", "crow_indices", "col_indices", "ccol_indices", "row_indices",
    "select", "transpose", "t", "view", "reshape", "expand", "unsqueeze", "unfold",
    "contiguous", "clone", "detach", "narrow", "narrow_copy",
}

# kwargs passed positionally, in this order (the calls of torch_call)
POSITIONAL = {
    "select": ("dim", "index"),
    "transpose": ("dim0", "dim1"),
    "view": ("size",),
    "reshape": ("shape",),
    "expand": ("size",),
    "unsqueeze": ("dim",),
    "unfold": ("dimension", "size", "step"),
    "narrow": ("dim", "start", "length"),
    "narrow_copy": ("dim", "start", "length"),
    "sparse_resize_": ("size", "sparse_dim", "dense_dim"),
    "sparse_resize_and_clear_": ("size", "sparse_dim", "dense_dim"),
}


def call(op, ins, kw):
    """The outputs (a list) of op on inputs and kwargs, torch's way."""
    kw = _kwargs(kw)
    if op in CALLS:
        return CALLS[op](list(ins), kw)
    args = list(ins)
    for name in POSITIONAL.get(op, ()):
        if name in kw:
            args.append(kw.pop(name))
    if op in METHODS or op.endswith("_"):
        if not args or not isinstance(args[0], torch.Tensor):
            raise mtcs_adapter.Refusal("INVALID_ARGUMENT",
                                       f"{op}: the first input is not a tensor")
        if op.endswith("_"):  # decoded tensors may not own resizable storage
            args[0] = args[0].clone()
        return [getattr(args[0], op)(*args[1:], **kw)]
    fn = getattr(torch, op, None)
    if fn is None:
        raise mtcs_adapter.Refusal("NOT_SUPPORTED", f"torch has no function {op}")
    return [fn(*args, **kw)]


def _sorted_compressed(t):
    """A 2-d CSR/CSC result with its plain indices sorted within each row
    (column), values moved with them. torch's CPU sparse @ sparse (MKL)
    leaves them in the order it computed them; the golden format requires
    them sorted and unique (a reader refuses the tensor otherwise), and the
    goldens hold torch's result sorted the same way. Nothing else changes."""
    if (not isinstance(t, torch.Tensor) or isinstance(t, MaskedTensor)
            or t.layout not in (torch.sparse_csr, torch.sparse_csc)):
        return t
    if t.dim() != 2 or t.dense_dim() != 0:
        return t
    by_row = t.layout == torch.sparse_csr
    comp = t.crow_indices() if by_row else t.ccol_indices()
    plain = t.col_indices() if by_row else t.row_indices()
    counts = comp[1:] - comp[:-1]
    seg = torch.repeat_interleave(torch.arange(counts.numel()), counts)
    if plain.numel() < 2 or bool(((seg[1:] > seg[:-1]) | (plain[1:] > plain[:-1])).all()):
        return t
    order = torch.from_numpy(np.lexsort((plain.numpy(), seg.numpy())))
    make = torch.sparse_csr_tensor if by_row else torch.sparse_csc_tensor
    return make(comp.clone(), plain[order], t.values()[order], t.shape)


def _floating(x):
    t = x.get_data() if isinstance(x, MaskedTensor) else x
    return isinstance(t, torch.Tensor) and t.is_floating_point()


def _fresh(t):
    """A copy of t with torch's own contiguous strides (a decoded zero-size
    array keeps numpy's, which MaskedTensor's backward then refuses to match:
    "aten.new_empty_strided: args[2] expected to be the same as data.stride()")."""
    if t.layout != torch.strided:
        return t.detach().clone()
    return torch.empty(t.shape, dtype=t.dtype).copy_(t)


def _leaf(x):
    """x as a fresh leaf that requires grad (floating tensors), else x."""
    if not _floating(x):
        return x
    if isinstance(x, MaskedTensor):
        return masked_tensor(_fresh(x.get_data()), _fresh(x.get_mask()), requires_grad=True)
    return _fresh(x).requires_grad_(True)


def backward(req):
    """A gradient case: the op's forward on leaf inputs (every floating
    tensor input requires grad), torch.autograd.backward with the request's
    upstream gradients, each input's .grad (None where torch gives none; a
    ZeroTensor, as sgn's, materialized)."""
    leaves = [_leaf(x) for x in req.inputs]
    outs = call(req.op, leaves, req.kwargs)
    gouts = [masked_tensor(_fresh(g.get_data()), _fresh(g.get_mask()))
             if isinstance(g, MaskedTensor) else _fresh(g) for g in req.grad_outputs]
    torch.autograd.backward(list(outs), gouts)
    grads = [x.grad if isinstance(x, torch.Tensor) and _floating(x) else None for x in leaves]
    return [g if g is None or isinstance(g, MaskedTensor) or not g._is_zerotensor()
            else torch.zeros(g.shape, dtype=g.dtype) for g in grads]


def handle(req):
    if req.profile != "torch":
        raise mtcs_adapter.Refusal("NOT_SUPPORTED", f"profile {req.profile}: torch only")
    try:
        if req.backward:
            return backward(req)
        return [_sorted_compressed(t) for t in call(req.op, req.inputs, req.kwargs)]
    except mtcs_adapter.Refusal:
        raise
    except Exception as e:  # noqa: BLE001 - torch's refusal, classified as the goldens do
        classify = grad_status_of if req.backward else status_of
        raise mtcs_adapter.Refusal(*classify(req.op, e)) from e


def main():
    torch.manual_seed(0)
    return mtcs_adapter.serve("torch.masked", torch.__version__, ["torch"], handle,
                              mode="torch", backward=True)


if __name__ == "__main__":
    sys.exit(main())
