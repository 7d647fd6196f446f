/* sps_softmax_unstored_as_zero.c - breaks SPS-5: torch.sparse.softmax of a
 * plain COO tensor along a sparse dim counts the unstored elements of each
 * slice as zeros (each takes a share exp(0 - max)), the dense softmax of
 * the densified tensor, where torch counts them as -inf (no share: the
 * stored entries of a slice sum to 1). Densifying, softmaxing and keeping
 * the stored positions is the shortcut. */
#include "mutant.h"

static mt_status mutant_sparse_softmax(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_sparse_softmax(call, err);
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (st != MT_OK || call->n_out != 1 || !x || x->kind != MT_KIND_COO) return st;
  mt_tensor *o = call->out[0], *c = NULL; /* o: on the coalesced indices */
  int d = (int)mt_kw_int(call->kw, "dim", 0);
  if (d < 0) d += o->ndim;
  if (d >= o->sparse_dim || mt_coo_row_numel(o) != 1) return st;
  if ((st = mt_coo_coalesce(x, &c, err)) != MT_OK) return st;
  int64_t n = c->nnz;
  for (int64_t e = 0; e < n; e++) { /* slice of entry e: same indices but d */
    double m = -INFINITY, s = 0;
    int64_t cnt = 0;
    for (int pass = 0; pass < 2; pass++)
      for (int64_t f = 0; f < n; f++) {
        int same = 1;
        for (int r = 0; r < c->sparse_dim && same; r++)
          if (r != d && c->indices[(int64_t)r * n + f] != c->indices[(int64_t)r * n + e]) same = 0;
        if (!same) continue;
        double v = mt_get_f64(c->values, c->dtype, f);
        if (pass == 0) m = v > m ? v : m, cnt++;
        else s += exp(v - m);
      }
    int64_t unstored = c->shape[d] - cnt;
    double m2 = unstored > 0 && m < 0 ? 0 : m; /* the zeros join the max */
    s = s * exp(m - m2) + (double)unstored * exp(-m2);
    mt_set_f64(o->values, o->dtype, e, exp(mt_get_f64(c->values, c->dtype, e) - m2) / s);
  }
  mt_tensor_free(c);
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sparse_softmax] = mutant_sparse_softmax,
};
MT_MUTANT_ENTRY("sps_softmax_unstored_as_zero", kernels)
