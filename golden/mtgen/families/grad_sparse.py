"""Family grad_sparse: gradients through plain (not masked) sparse tensors
(golden format 3, mtgen/grad.py; spec/SEMANTICS.md SPG-*).

Every floating input is a leaf that requires grad (a COO or CSR tensor as
well as a dense one); torch.autograd.backward runs with seeded upstream
gradients of each output's own layout (a sparse output's carry its indices)
and what is recorded is each input's `.grad` as torch 2.15 makes it: its
layout (dense, COO, CSR ...), its values, and for COO its `coalesced` flag.
torch's refusal of a backward (the forward succeeded) is an error case.

Two parts:
- note_cases: the sparse tensor note's rows with "need autograd = Y"
  (/work/shared/reference/sparse-tensor-note.md: pointwise one and two
  tensor, BLAS, Others, the TODO table), on COO and on CSR where torch's
  forward takes CSR, float32 and float64, each on the op name of ops.def
  (NOTE below). The case's `source` names the row and the note's "dense
  grad" column (`note:<table>:<row>:dense_grad=Y|N`): SPG-1 is what torch
  gives instead, recorded in the file (grads/<k> kind), whether or not it
  agrees with the note (`python -m mtgen.families.grad_sparse` prints the
  comparison).
- derived_cases: mtgen.grad.grad_case of the forward cases of the plain
  sparse families (sparse_blas, sparse_misc, sparse_convert; unary's,
  binary's, reduce's and structure's plain sparse cases), float32 and
  float64, no in-place op, at most PER_GROUP per op and layouts token;
  then float16 and bfloat16 ok cases, at most HALF_PER_OP per op and
  dtype, spread over its layouts tokens (GRAD-9: the input's dtype, the
  tolerance measured per case, mtgen.grad.half_tolerance).

What torch 2.15 does (checked by running these cases):
- a pointwise op on a COO leaf (pow, log1p, mul/div by a number,
  sparse_mask ...) gives a COO gradient over the input's own indices,
  flagged uncoalesced even when the input was coalesced; a CSR leaf gets
  a CSR gradient of its own structure.
- add/sub/mul of two sparse tensors give each sparse input a sparse grad
  (add(S, S): coalesced; sub's second and mul's: uncoalesced flag).
  mul of a COO tensor and a dense one of the same shape gives the DENSE
  operand a COO gradient too (the product's indices); a 0-dim dense
  operand gets a dense one.
- an uncoalesced COO leaf: a linear op (mul by a number, t, neg ...) gives
  a gradient over the input's own entries, duplicates included, each with
  its own derivative (the runner compares COO gradients after coalescing,
  so only their sum per index is checked); a nonlinear one (pow, log1p)
  a gradient over the coalesced indices.
- a product that returns a dense tensor from a sparse operand (torch.mm,
  addmm, F.linear, bmm, matmul, addmv, torch.spmm, torch.sum) gives the
  sparse operand a dense gradient; torch.sparse.mm, torch.sparse.addmm and
  torch.sparse.sum give a sparse one (COO: the input's indices, CSR: its
  structure).
- torch refuses the backward (SPG-2, all LAYOUT_MISMATCH here) of hspmm,
  smm and sspaddmm ("derivative for aten::... is not implemented"),
  norm of a COO tensor (masked_fill_ / eq on SparseCPU), index_select,
  narrow_copy and cat on COO (index_add_ / as_strided on SparseCPU),
  copy_ into a sparse tensor ("memory format option is only supported by
  strided tensors"), mul of CSR and dense (MulBackward0 "returned an
  invalid gradient ... expected layout Strided but got SparseCsr"), and
  many unary ops whose derivative formula calls a dense-only op on the
  sparse input (sin: cos, tanh: tanh_backward, sqrt: sparse division,
  asin: add(sparse, dense) ...).
"""
import collections
import warnings

import torch
import torch.nn.functional as F

from .. import sparse
from ..grad import grad_case, neg_zero_like
from ..model import ALL_DTYPES, Case, check_ids, variant_of
from . import (binary_sparse, reduce_sparse, sparse_blas, sparse_convert, sparse_misc,
               structure_sparse, unary)

FLOATS = ("f32", "f64")
HALF, HALF_PER_OP = ("f16", "bf16"), 2  # half-precision cases per op and dtype
PER_GROUP = 4  # derived cases per op and layouts token (an error among them where torch has one)

# torch's refusals of a sparse backward that sparse.error_class does not
# place (it would call them INVALID_ARGUMENT): each is the backward's
# formula meeting a layout it has no kernel for, so LAYOUT_MISMATCH
# (DESIGN.md: "the op or this combination of layouts is refused"; first
# match wins, before sparse.py's table)
GRAD_ERRORS = (
    ("LAYOUT_MISMATCH", (
        "derivative for aten::",                      # hspmm, sspaddmm (smm): no backward at all
        "returned an invalid gradient",               # MulBackward0: CSR grad for a dense input
        "add(sparse, dense) is not supported",        # asin, atan, tan ... formulas
        "op2-sparse addition",                        # add(0-dim dense, sparse) in a formula
        "Sparse division requires",                   # sqrt's formula: grad / (2 sqrt(x))
        "memory format option",                       # copy_, clone of BSR/BSC/CSC
        "computation on CPU is not implemented",      # addmm's backward on BSR/BSC
        "operation not supported for mat",            # addmv's backward on BSC
        "Expected result Tensor to be of format",     # abs of CSR: sgn's formula
        "expand is unsupported",                      # sum(S, dim) backward
        "tensor layout but got", "layout must be",    # accessors on the wrong layout
        "expected SparseCsr or SparseCsc layout",     # to_sparse_bsr/bsc backward
        "sparse_dim()!=2 is not supported",           # COO -> CSR of a hybrid grad
    )),
)
error_class = sparse.classifier(GRAD_ERRORS)


def token_dtype(c):
    return c.id.split(".")[2]


def layouts_token(c):
    return c.id.split(".")[1]


# ---- the sparse note's rows ----------------------------------------------------

M, K, N = sparse_blas.M, sparse_blas.K, sparse_blas.N


def _s(layout, shape=(3, 4)):
    """A plain sparse (3, 4) tensor, values in (0.1, 0.5) (every pointwise
    op's domain), 5 of 12 entries stored (mtgen/sparse.py plain); other
    shapes from sparse_blas.sparse (about 45% stored, randn values)."""
    if shape == (3, 4):
        return lambda g, dt: sparse.plain(g, dt, layout)
    return lambda g, dt: sparse_blas.sparse(layout, g, shape, dt)


def _d(shape):
    return lambda g, dt: torch.randn(shape, generator=g, dtype=torch.float64).to(dt)


def _num(x):
    return lambda g, dt: x


def _ins(*makers):
    return lambda g, dt: [m(g, dt) for m in makers]


def _same_structure(layout):
    """[dst, src]: copy_'s operands, one structure (torch's compressed
    copy_ needs the same nnz), other values."""
    def build(g, dt):
        dst = sparse.plain(g, dt, layout)
        return [dst, structure_sparse._copy_src(g, dt, dst)]
    return build


def _bmm_ins(layout):
    def build(g, dt):
        a = sparse_blas.dense_sparse(g, (2, M, K), dt).to_sparse() if layout == "coo" else \
            sparse_blas.batched_csr(g, (2, M, K), dt)
        return [a, sparse_blas.vals(g, (2, K, N), dt)]
    return build


SP = torch.sparse
BA = {"beta": 0.5, "alpha": 2.0}
# ((table, row, the note's dense grad column), (op, layouts token, build(layout), run,
# torch_call, kwargs[, variant])): "{s}" in the token stands for the sparse layout
# (coo or csr); the id's variant is `note` or `note_<variant>`
NOTE = [
    (("pointwise_one", "pow", "N"),
     ("pow", "{s}", lambda s: _ins(_s(s), _num(2.5)), lambda i, k: [torch.pow(i[0], i[1])],
      "torch.pow(s, 2.5)", {})),
    (("pointwise_one", "log1p", "Y"),
     ("log1p", "{s}", lambda s: _ins(_s(s)), lambda i, k: [torch.log1p(i[0])],
      "torch.log1p(s)", {})),
    (("pointwise_one", "div(Sparse, Scalar)", "Y"),
     ("div", "{s}_scalar", lambda s: _ins(_s(s), _num(4.0)), lambda i, k: [torch.div(i[0], i[1])],
      "torch.div(s, 4.0)", {})),
    (("pointwise_one", "mul(Sparse, Scalar)", "Y"),
     ("mul", "{s}_scalar", lambda s: _ins(_s(s), _num(2.5)), lambda i, k: [torch.mul(i[0], i[1])],
      "torch.mul(s, 2.5)", {})),
    (("pointwise_two", "add(Sparse, Sparse, Scalar)", "Y"),
     ("add", "{s}_{s}", lambda s: _ins(_s(s, (M, K)), _s(s, (M, K))),
      lambda i, k: [torch.add(i[0], i[1], **k)], "torch.add(a, b, alpha=0.5)", {"alpha": 0.5})),
    (("pointwise_two", "add(Dense, Sparse, Scalar)", "Y"),
     ("add", "dense_{s}", lambda s: _ins(_d((M, K)), _s(s, (M, K))),
      lambda i, k: [torch.add(i[0], i[1], **k)], "torch.add(d, s, alpha=0.5)", {"alpha": 0.5})),
    (("pointwise_two", "sub(Sparse, Sparse, Scalar)", "Y"),
     ("sub", "{s}_{s}", lambda s: _ins(_s(s, (M, K)), _s(s, (M, K))),
      lambda i, k: [torch.sub(i[0], i[1], **k)], "torch.sub(a, b, alpha=0.5)", {"alpha": 0.5})),
    (("pointwise_two", "mul(Sparse, Sparse)", "Y"),
     ("mul", "{s}_{s}", lambda s: _ins(_s(s, (M, K)), _s(s, (M, K))),
      lambda i, k: [torch.mul(i[0], i[1])], "torch.mul(a, b)", {})),
    (("blas", "addmm(Dense, Sparse, Dense, Scalar, Scalar)", "Y"),
     ("addmm", "dense_{s}_dense", lambda s: _ins(_d((M, N)), _s(s, (M, K)), _d((K, N))),
      lambda i, k: [torch.addmm(*i, **k)], "torch.addmm(c, s, d, beta=0.5, alpha=2.0)", BA)),
    (("blas", "sspaddmm(Sparse, Sparse, Dense, Scalar, Scalar)", "Y"),
     ("sspaddmm", "{s}_{s}_dense", lambda s: _ins(_s(s, (M, N)), _s(s, (M, K)), _d((K, N))),
      lambda i, k: [torch.sspaddmm(*i, **k)], "torch.sspaddmm(c, s, d, beta=0.5, alpha=2.0)",
      BA)),
    (("blas", "mm(Sparse, Dense)", "Y"),
     ("mm", "{s}_dense", lambda s: _ins(_s(s, (M, K)), _d((K, N))),
      lambda i, k: [torch.mm(*i)], "torch.mm(s, d)", {})),
    (("blas", "smm(Sparse, Dense)", "Y"),
     ("smm", "{s}_dense", lambda s: _ins(_s(s, (M, K)), _d((K, N))),
      lambda i, k: [torch.smm(*i)], "torch.smm(s, d)", {})),
    (("blas", "hspmm(Sparse, Dense)", "Y"),
     ("hspmm", "{s}_dense", lambda s: _ins(_s(s, (M, K)), _d((K, N))),
      lambda i, k: [torch.hspmm(*i)], "torch.hspmm(s, d)", {})),
    # torch.spmm (op spmm): the note's row as named, dense gradients as torch.mm's;
    # torch.sparse.mm (sparse_mm), the namespaced product, gives sparse ones
    (("blas", "spmm(Sparse, Dense)", "Y"),
     ("spmm", "{s}_dense", lambda s: _ins(_s(s, (M, K)), _d((K, N))),
      lambda i, k: [torch.spmm(*i)], "torch.spmm(s, d)", {})),
    (("blas", "spmm(Sparse, Dense)", "Y"),
     ("sparse_mm", "{s}_dense", lambda s: _ins(_s(s, (M, K)), _d((K, N))),
      lambda i, k: [SP.mm(*i)], "torch.sparse.mm(s, d)", {})),
    (("others", "norm", "N"),
     ("norm", "{s}", lambda s: _ins(_s(s)), lambda i, k: [torch.norm(i[0])], "torch.norm(s)", {})),
    (("others", "t_ / t", "N"),
     ("t", "{s}", lambda s: _ins(_s(s)), lambda i, k: [i[0].t()], "s.t()", {})),
    # nonzero: torch refuses the forward on COO and CSR ("Could not run
    # 'aten::nonzero' with arguments from the 'SparseCPU' backend"), and its
    # result is integer: no backward case (spec/no-gradient-sparse.tsv)
    (("todo", "sum", "Y"),
     ("sum", "{s}", lambda s: _ins(_s(s)), lambda i, k: [torch.sum(i[0])], "torch.sum(s)", {})),
    (("todo", "sum", "Y"),
     ("sparse_sum", "{s}", lambda s: _ins(_s(s)), lambda i, k: [SP.sum(i[0], **k)],
      "torch.sparse.sum(s, dim=0)", {"dim": 0})),
    (("todo", "copy_", "N"),
     ("copy_", "{s}_{s}", _same_structure, lambda i, k: [i[0].clone().copy_(i[1])],
      "dst.clone().copy_(src)  # dst is a leaf: copied before the in-place op", {})),
    # narrow: torch refuses the forward on COO ("Could not run 'aten::as_strided'")
    # and CSR: narrow_copy is the row's case
    (("todo", "narrow", "N"),
     ("narrow_copy", "{s}", lambda s: _ins(_s(s)),
      lambda i, k: [i[0].narrow_copy(k["dim"], k["start"], k["length"])],
      "s.narrow_copy(dim, start, length)", {"dim": 1, "start": 1, "length": 2})),
    (("todo", "select_index", "N"),
     ("index_select", "{s}_dense", lambda s: _ins(_s(s), lambda g, dt: torch.tensor([2, 0])),
      lambda i, k: [torch.index_select(i[0], k["dim"], i[1])],
      "torch.index_select(s, dim, index)", {"dim": 0})),
    (("todo", "mul(Sparse, Dense)", "Y"),
     ("mul", "{s}_dense", lambda s: _ins(_s(s), _d((3, 4))), lambda i, k: [torch.mul(i[0], i[1])],
      "torch.mul(s, d)", {})),
    (("todo", "F.linear", "Y"),
     ("linear", "dense_{s}", lambda s: _ins(_d((3, K)), _s(s, (N, K))),
      lambda i, k: [F.linear(*i)], "torch.nn.functional.linear(x, s)", {})),
    # with a bias: torch's forward refuses a COO weight (addmm_sparse_dense
    # "expected either 'mat1' to have sparse layout"), takes a CSR one
    (("todo", "F.linear", "Y"),
     ("linear", "dense_{s}", lambda s: _ins(_d((3, K)), _s(s, (N, K)), _d((N,))),
      lambda i, k: [F.linear(*i)], "torch.nn.functional.linear(x, s, bias)", {}, "bias")),
    # a one-element bias, broadcast to every output: its gradient sums all
    # of the upstream gradient (the sweep's grad_sparse_math.h:183, whose
    # one-element path no case reached)
    (("todo", "F.linear", "Y"),
     ("linear", "dense_{s}", lambda s: _ins(_d((3, K)), _s(s, (N, K)), _d((1,))),
      lambda i, k: [F.linear(*i)], "torch.nn.functional.linear(x, s, bias)", {}, "bias_one")),
    (("todo", "softmax", "N"),
     ("sparse_softmax", "{s}", lambda s: _ins(_s(s)), lambda i, k: [SP.softmax(i[0], **k)],
      "torch.sparse.softmax(s, dim)", {"dim": 1})),
    (("todo", "cat", "N"),
     ("cat", "{s}_{s}", lambda s: _ins(_s(s), _s(s)),
      lambda i, k: [torch.cat(list(i), dim=k["dim"])], "torch.cat([a, b], dim)", {"dim": 0})),
    # max: torch refuses the forward on COO ("Could not run 'aten::max'") and
    # CSR: no backward case (spec/no-gradient-sparse.tsv)
    (("todo", "bmm(Sparse, Dense)", "Y"),
     ("bmm", "{s}_dense", _bmm_ins, lambda i, k: [torch.bmm(*i)], "torch.bmm(s, d)", {})),
]
# the note's rows with no case: (row, why)
NOTE_WITHOUT_CASE = {
    "nonzero": "torch refuses the forward on COO and CSR ('aten::nonzero' has no SparseCPU "
               "kernel) and its result is integer: nothing to differentiate",
    "narrow": "torch refuses the forward on COO ('aten::as_strided') and CSR (no strides); "
              "the row's case is narrow_copy",
    "max": "torch refuses the forward on COO ('aten::max') and CSR",
}


def in_ops_def(op):
    """Whether op is an op of ops.def (a NOTE row of an op not in it is skipped)."""
    return any(op in sparse.family_ops(f) for f in (
        "sparse_blas", "sparse_misc", "sparse_convert", "binary", "unary", "reduce",
        "structure"))


def note_cases():
    """One backward case per row, layout (COO; CSR where torch's forward
    takes it) and float dtype; ids `<op>.<layouts>.<dtype>.note[_<variant>].grad`."""
    out = []
    for (table, row, dense), (op, tok, build_of, run, call, kw, *variant) in NOTE:
        if not in_ops_def(op):
            continue
        for lay in ("coo", "csr"):
            for short in FLOATS:
                dt = ALL_DTYPES[short]
                b = (lambda g, build=build_of(lay), dt=dt: build(g, dt))
                name = "_".join(("note", *variant))
                fwd = Case(id=f"{op}.{tok.format(s=lay)}.{short}.{name}", op=op, rules=(),
                           tolerance="exact", build=b, run=run, torch_call=call,
                           kwargs=dict(kw), poison=False,
                           source=f"note:{table}:{row}:dense_grad={dense}")
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    d = grad_case(fwd, rules=("SPG-1",), classify=error_class)
                if d is None:
                    continue  # torch's forward refuses this layout
                if d.error_class is not None:
                    d.rules = ("SPG-2",)
                out.append(d)
    return out


# ---- set upstream gradients -------------------------------------------------------

# (op, layouts token, layouts, build(layout), run, torch_call, kwargs, id
# suffix): an upstream gradient with -0.0 in it. Where a gradient element is
# a copy of one upstream term (a sum's or sparse.sum's broadcast, a
# transpose, values' scatter, to_dense's copy, the operand of an add/mul of
# its own shape) torch keeps -0.0; where torch reduces (sum_to over a
# broadcast dim, a 0-d operand, sparse_mask's densify) the terms are summed
# from 0.0 and -0.0 gives 0.0. The sign is compared (exact; ulp:N for
# float16), so every gradient here is exact: one term, a product of two, or
# a sum of zeros (addmm's, under an upstream gradient of -0.0 only).
ALL_NEG_ZERO = {"_0d", "_bcast"}  # suffixes whose upstream gradient is -0.0 everywhere
ONE = lambda s: _ins(_s(s))  # noqa: E731
TWO = lambda s: _ins(_s(s), _s(s))  # noqa: E731
SIGNED_ZERO = [
    ("sum", "{s}", ("coo", "csr"), ONE, lambda i, k: [torch.sum(i[0])], "torch.sum(s)", {}, ""),
    ("sparse_sum", "{s}", ("coo",), ONE, lambda i, k: [SP.sum(i[0], **k)],
     "torch.sparse.sum(s, dim=0)", {"dim": 0}, "_dim0"),
    ("sparse_sum", "{s}", ("coo",), ONE, lambda i, k: [SP.sum(i[0], **k)],
     "torch.sparse.sum(s, dim=1)", {"dim": 1}, "_dim1"),
    ("t", "{s}", ("coo", "csr"), ONE, lambda i, k: [i[0].t()], "s.t()", {}, ""),
    ("values", "{s}", ("coo", "csr"), ONE, lambda i, k: [i[0].values()], "s.values()", {}, ""),
    ("to_dense", "{s}", ("coo", "csr"), ONE, lambda i, k: [i[0].to_dense()], "s.to_dense()",
     {}, ""),
    ("add", "dense_{s}", ("coo", "csr"), lambda s: _ins(_d((3, 4)), _s(s)),
     lambda i, k: [torch.add(i[0], i[1], **k)], "torch.add(d, s, alpha=0.5)", {"alpha": 0.5},
     ""),
    ("add", "{s}_{s}", ("coo", "csr"), TWO, lambda i, k: [torch.add(i[0], i[1])],
     "torch.add(a, b)", {}, ""),
    ("sub", "{s}_{s}", ("coo",), TWO, lambda i, k: [torch.sub(i[0], i[1])], "torch.sub(a, b)",
     {}, ""),
    ("mul", "{s}_{s}", ("coo", "csr"), TWO, lambda i, k: [torch.mul(i[0], i[1])],
     "torch.mul(a, b)", {}, ""),
    ("mul", "{s}_scalar", ("coo",), lambda s: _ins(_s(s), _num(2.5)),
     lambda i, k: [torch.mul(i[0], i[1])], "torch.mul(s, 2.5)", {}, ""),
    # every upstream element -0.0 (ALL_NEG_ZERO): d's gradient sums them
    ("mul", "{s}_dense", ("coo",), lambda s: _ins(_s(s), _d(())),
     lambda i, k: [torch.mul(i[0], i[1])], "torch.mul(s, d) (d 0-d)", {}, "_0d"),
    # every upstream element -0.0: c's gradient sums a column of them (sum_to
    # over the broadcast dim: 0.0); s's and d's are sums of products of
    # -0.0 from 0.0, so every gradient is a zero, exactly
    ("addmm", "dense_{s}_dense", ("coo", "csr"), lambda s: _ins(_d((5,)), _s(s), _d((4, 5))),
     lambda i, k: [torch.addmm(*i, **k)], "torch.addmm(c, s, d, beta=0.5) (c of shape (5,))",
     {"beta": 0.5}, "_bcast"),
    ("sparse_mask", "dense_{s}", ("coo",), lambda s: _ins(_d((3, 4)), _s(s)),
     lambda i, k: [i[0].sparse_mask(i[1])], "d.sparse_mask(s)", {}, ""),
]


def signed_zero_cases():
    """Backward cases whose upstream gradient holds -0.0 (Case.grad_outputs):
    ids `<op>.<layouts>.<dtype>.upstream_neg_zero[<suffix>].grad`, float32,
    float64 and float16 (the sweep's gap `grad_sparse.c:769:53 const 0->1`
    and its kin, tests/sweep/README.md)."""
    out = []
    for op, tok, layouts, build_of, run, call, kw, suffix in SIGNED_ZERO:
        for lay in layouts:
            for short in ("f32", "f64", "f16"):
                dt = ALL_DTYPES[short]
                name = "upstream_neg_zero" + suffix
                step = 1 if suffix in ALL_NEG_ZERO else 2
                fwd = Case(id=f"{op}.{tok.format(s=lay)}.{short}.{name}", op=op, rules=(),
                           tolerance="exact",
                           build=lambda g, dt=dt, b=build_of(lay): b(g, dt),
                           run=run, torch_call=call + " with -0.0 upstream", kwargs=dict(kw),
                           poison=False)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    d = grad_case(fwd, rules=("SPG-3",), tolerance="exact",
                                  classify=error_class,
                                  grad_outputs=lambda outs, g, step=step: [
                                      neg_zero_like(o, g, step) for o in outs])
                if d is None and short == "f16":
                    continue  # torch has no float16 kernel for it (add of COO: cadd_sparse)
                assert d is not None and d.error_class is None, fwd.id
                out.append(d)
    return out


# ---- derived from the forward families -----------------------------------------

def forward_sources():
    """(label, forward cases) of every family part that takes plain sparse
    inputs."""
    return (("sparse_blas", sparse_blas.cases()), ("sparse_misc", sparse_misc.cases()),
            ("sparse_convert", sparse_convert.cases()),
            ("unary", unary.plain_sparse_cases()), ("binary", binary_sparse.cases()),
            ("reduce", reduce_sparse.cases()), ("structure", structure_sparse.cases()))


def _spread(items, k):
    """k of items, evenly spaced (first and last among them)."""
    if len(items) <= k:
        return list(items)
    return [items[round(i * (len(items) - 1) / (k - 1))] for i in range(k)] if k > 1 \
        else [items[0]]


def pick(group):
    """At most PER_GROUP derived cases of one op and layouts token: one
    refusal where torch refuses some (two when it refuses every one), the
    rest spread over the ok ones' variants, float32 and float64
    alternating."""
    ok = [d for d in group if d.error_class is None]
    err = [d for d in group if d.error_class is not None]
    n_err = 0 if not err else (min(2, len(err)) if not ok else 1)
    chosen = _spread([d for d in err if token_dtype(d) == "f32"] or err, n_err)
    variants = collections.OrderedDict()
    for d in ok:
        variants.setdefault(variant_of(d.id), []).append(d)
    picks = _spread(list(variants.values()), PER_GROUP - len(chosen))
    for i, same in enumerate(picks):
        want = FLOATS[i % 2]
        chosen.append(next((d for d in same if token_dtype(d) == want), same[0]))
    return chosen


def gives_grad(d):
    """Whether torch's backward of d gives some input a gradient (norm with
    p=0 gives none: its derivative is zero, left undefined)."""
    from ..grad import backward
    from ..model import case_rng
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, _, _, grads = backward(d, d.build(case_rng(d.id)))
    return any(x is not None for x in grads)


def half_pick(group):
    """Up to HALF_PER_OP of one op's ok half-precision cases of one dtype,
    spread over its layouts tokens (first cases of each), then variants."""
    by_tok = collections.OrderedDict()
    for d in group:
        by_tok.setdefault(d.id.split(".")[1], []).append(d)
    firsts = [v[0] for v in by_tok.values()]
    chosen = _spread(firsts, HALF_PER_OP)
    rest = [d for d in group if d not in chosen]
    return chosen + _spread(rest, HALF_PER_OP - len(chosen)) if len(chosen) < HALF_PER_OP \
        else chosen


def half_derived(c):
    """The backward case of half-precision forward case c when torch gives
    a gradient (tolerance mtgen.grad.half_tolerance), else None; torch's
    refusals are cased in float32/float64 only."""
    if "dtype" in c.kwargs:
        return None  # a float32 result of a half input: no float64 twin to measure against
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = grad_case(c, rules=("SPG-3",), classify=error_class)
    if d is None or d.error_class is not None or not gives_grad(d):
        return None
    return d


# A case whose gradient sums terms that cancel, where GRAD_TOL's relative
# float32 bound measures the rounding against a small result: torch's AVX2
# kernels give linear's CSR weight gradient 6.9e-5 relative (2.4e-7
# absolute) off the float64 one at an element of 0.0017, over half of
# rel:1e-4 (the AVX512 kernels, which made the file first, stay within it).
# The bound is absolute there: a few float32 roundings of the summed
# products (|terms| < 2).
GRAD_TOL_OVERRIDE = {"linear.dense_csr.f32.note.grad": "abs:1e-6"}


# forward variants added after the picks were made, left out so that the
# picks stay put (signed_zero_cases holds their backward's point)
LATER_VARIANTS = ("negzero_uncoalesced", "negzero", "broadcast_row2d", "three_inputs",
                  "sparse_and_batch", "dup_rounding", "dup_products", "dup_products_drawn",
                  "dup_negzero", "broadcast_one", "coalesced_dim0_keepdim", "hybrid_dim0_keepdim",
                  "nnz0_dim0_keepdim", "uncoalesced_dim0_keepdim", "basic_dim0_keepdim",
                  "layout_pair", "empty_dense_dim", "empty_dense_dim_sparse_dim1",
                  "empty_dense_dim_sparse_dim2", "error_order", "error_order_dtypes",
                  "error_order_inner_dtypes", "error_order_batched", "uncoalesced_mat2",
                  "dim_empty")


def later(c):
    """Forward case c came after the picks (LATER_VARIANTS)."""
    return variant_of(c.id) in LATER_VARIANTS


# forward cases of an integer operand beside a floating one, whose backward
# gives the floating operand alone a gradient (an operand with elements and
# none: the sweep's gap `impl/cuda/grad_ew.cu:67`, tests/sweep/README.md);
# derived whatever their id's dtype token, after the picks
MIXED_DTYPE_GRADS = ("add.coo_coo.i64.plain_promote_f32",)


def derived_cases():
    groups, half = collections.OrderedDict(), collections.OrderedDict()
    mixed = []
    for label, forward in forward_sources():
        for c in forward:
            if c.id in MIXED_DTYPE_GRADS:
                mixed.append(own_grad_case(c))
            if c.op.endswith("_") or c.error_class is not None:
                continue
            if later(c):
                continue
            if token_dtype(c) in HALF:
                d = half_derived(c)
                if d is not None:
                    half.setdefault((c.op, token_dtype(c)), []).append(d)
                continue
            if token_dtype(c) not in FLOATS:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                d = grad_case(c, rules=("SPG-3",), classify=error_class)
            if d is None or (d.error_class is None and not gives_grad(d)):
                continue
            if d.error_class is not None:
                d.rules = ("SPG-2",)
            groups.setdefault((c.op, layouts_token(c)), []).append(d)
    out = []
    for group in groups.values():
        out += pick(group)
    for group in half.values():
        out += half_pick(group)
    assert len(mixed) == len(MIXED_DTYPE_GRADS), MIXED_DTYPE_GRADS
    return out + mixed


# torch.sparse.mm of two COO matrices: each gradient is the product P
# (coalesced) masked like its input x by sparse_mask_like_grad: P projected
# on x (P's pattern, 0 where x stores nothing) when x is uncoalesced or
# stores at least as many entries as P, else P.sparse_mask(x) (x's pattern).
# Fixed patterns, random values; found by golden/reseed.py (a draw of
# `sparse_mm.coo_coo.f32.coalesced.grad` whose B stored as many as P).
MASK_LIKE = {
    # B (9 entries) >= A^T @ G (9, another pattern): B's gradient has P's pattern
    "mask_like_project": (((0, 1, 1, 1, 3, 3, 3), (1, 0, 1, 5, 0, 1, 5)),
                          ((0, 1, 1, 2, 2, 3, 4, 4, 5), (2, 2, 3, 0, 2, 2, 2, 3, 1)), True),
    # the same B stored uncoalesced (one entry twice, 10): projected too
    "mask_like_uncoalesced": (((0, 1, 1, 1, 3, 3, 3), (1, 0, 1, 5, 0, 1, 5)),
                              ((0, 1, 1, 2, 2, 3, 4, 4, 5, 0), (2, 2, 3, 0, 2, 2, 2, 3, 1, 2)),
                              False),
    # B (3) < A^T @ G (4, another pattern): B's own pattern, its (2, 2) 0;
    # A (8) = G @ B^T (8): projected, the same pattern
    "mask_like_mask": (((0, 0, 1, 1, 2, 2, 3, 3), (0, 1, 0, 1, 0, 1, 0, 1)),
                       ((0, 1, 2), (0, 1, 2)), True),
}


def _mask_like_coo(idx, shape, coalesced):
    def build(g, dt):
        i = torch.tensor(idx)
        v = torch.randn(i.shape[1], generator=g, dtype=torch.float64).to(dt)
        return torch.sparse_coo_tensor(i, v, shape, is_coalesced=coalesced)
    return build


def own_grad_case(fwd):
    """The gradient case (SPG-3) of a forward case defined here rather than
    taken from a family, which torch must differentiate."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = grad_case(fwd, rules=("SPG-3",), classify=error_class)
    assert d is not None and d.error_class is None, fwd.id
    return d


def mask_like_cases():
    out = []
    for name, (ia, ib, coalesced) in MASK_LIKE.items():
        a, b = _mask_like_coo(ia, (4, 6), True), _mask_like_coo(ib, (6, 4), coalesced)
        for short in FLOATS:
            dt = ALL_DTYPES[short]
            fwd = Case(id=f"sparse_mm.coo_coo.{short}.{name}", op="sparse_mm", rules=(),
                       tolerance="exact", build=lambda g, dt=dt, a=a, b=b: [a(g, dt), b(g, dt)],
                       run=lambda ins, kw: [torch.sparse.mm(ins[0], ins[1])],
                       torch_call="torch.sparse.mm(mat1, mat2)", poison=False)
            out.append(own_grad_case(fwd))
    return out


def masked_ends_cases():
    """to_sparse_coo of a MaskedTensor (dense storage) whose first and last
    elements are specified: the backward scans the mask (its gradient is the
    upstream one where the mask is true), and a scan one element too far
    wraps to the first (tests/sweep: `grad_sparse.c:660`'s `<=` survived
    while the committed mask's first element was false)."""
    out = []
    for short in FLOATS:
        dt = ALL_DTYPES[short]

        def build(g, dt=dt):
            from torch.masked import masked_tensor
            x = torch.randn((4, 6), generator=g, dtype=torch.float64).to(dt)
            m = torch.rand((4, 6), generator=g) < 0.5
            m[0, 0] = m[-1, -1] = True
            return [masked_tensor(x, m)]
        fwd = Case(id=f"to_sparse_coo.masked.{short}.first_and_last_specified",
                   op="to_sparse_coo", rules=(), tolerance="exact", build=build,
                   run=lambda ins, kw: [ins[0].to_sparse_coo()], torch_call="x.to_sparse_coo()",
                   poison=False)
        out.append(own_grad_case(fwd))
    return out


def cases():
    out = (note_cases() + derived_cases() + signed_zero_cases() + mask_like_cases()
           + masked_ends_cases())
    for d in out:
        d.tolerance = GRAD_TOL_OVERRIDE.get(d.id, d.tolerance)
    return check_ids(out)


# ---- the note's column against torch (for the report) ---------------------------

def _kind(t):
    if t is None:
        return "-"
    if t.layout == torch.sparse_coo:
        return "coo" + ("" if t.is_coalesced() else "(uncoalesced)")
    return {torch.strided: "dense", torch.sparse_csr: "csr", torch.sparse_csc: "csc",
            torch.sparse_bsr: "bsr", torch.sparse_bsc: "bsc"}[t.layout]


def note_table():
    """Lines: row, note's dense-grad column, case, what torch gives each
    input (or its refusal), and whether the sparse inputs' grads agree with
    the column."""
    from ..grad import backward
    from ..model import case_rng
    from ..run import torch_error_text
    lines = []
    for c in note_cases():
        if c.id.split(".")[2] != "f64":
            continue
        dense = c.source.rsplit("=", 1)[1]
        ins = c.build(case_rng(c.id))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _, _, _, grads = backward(c, ins)
        except Exception as e:  # noqa: BLE001 - the refusal is the finding
            lines.append(f"{c.source}\t{c.id}\trefused: {torch_error_text(e)[:90]}")
            continue
        kinds = [_kind(x) for x in grads]
        sparse_in = [k for x, k in zip(ins, kinds)
                     if isinstance(x, torch.Tensor) and x.layout != torch.strided]
        agree = all((k == "dense") == (dense == "Y") for k in sparse_in)
        lines.append(f"{c.source}\t{c.id}\tgrads {', '.join(kinds)}\t"
                     f"{'agrees' if agree else 'DISAGREES'}")
    return lines


if __name__ == "__main__":
    print(*note_table(), sep="\n")
