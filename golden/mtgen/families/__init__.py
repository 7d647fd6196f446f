"""One module per op family of spec/include/mt/ops.def. Each module holds its
op table once (OPS: op -> tolerance, or a richer row) and `cases()`, the
family's cases in a fixed order."""
from . import (binary, grad_masked, grad_masked_fn, grad_sparse, masked, masked_fn, numpy_ma,
               optim, reduce, sparse_blas, sparse_convert, sparse_misc, sparse_optim, structure,
               unary)

FAMILIES = {"masked": masked, "unary": unary, "binary": binary, "reduce": reduce,
            "optim": optim, "masked_fn": masked_fn, "structure": structure,
            "numpy_ma": numpy_ma, "sparse_optim": sparse_optim,
            "sparse_convert": sparse_convert, "sparse_blas": sparse_blas,
            "sparse_misc": sparse_misc, "grad_masked": grad_masked,
            "grad_sparse": grad_sparse, "grad_masked_fn": grad_masked_fn}
