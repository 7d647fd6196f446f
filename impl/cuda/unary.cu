/* unary.cu - the unary family on the device: every op of
 * common/unary_ops.def on every storage the CPU reference takes (masked
 * dense/COO/CSR, plain COO and the compressed layouts), since the family's
 * only compute is out[k] = op(in[k]) over a flat buffer. The host plan
 * (checks, torch's dtype rules, layouts, outputs) is impl/cpu/unary.c's
 * (mt__unary_run); this file is its compute: upload, one thread per
 * element with common/unary_math.h, download. */
#include "common/exec.h"
#include "common/unary_math.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_un_par);

MTC_KERNEL void unary_kernel(mt_un_par p, const void *in, void *out, int64_t n) {
  MTC_FOR(k, n) mt_un_elem(&p, in, out, k);
}

extern "C" mt_status MTC(unary_exec)(const struct mt_un_par *p, const void *in, void *out,
                                     int64_t n, mt_error *err) {
  size_t si = mt_dtype_size(p->in), so = mt_dtype_size(p->out), total = 0;
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, n, si) || MTC(arena_add)(&total, n, so))
    return mt_err(err, MT_OUT_OF_MEMORY, "unary: %lld elements do not fit one device buffer",
                  (long long)n);
  if ((st = MTC(arena_open)(&a, total, "unary", err)) != MT_OK) return st;
  void *din = MTC(arena_take)(&a, n, si), *dout = MTC(arena_take)(&a, n, so);
  if ((st = MTC(upload)(&a, din, in, (size_t)n * si, err)) != MT_OK) goto out;
  if ((st = MTC_LAUNCH(&a, unary_kernel, n, *p, din, dout, n)) != MT_OK) goto out;
  st = MTC(download)(&a, out, dout, (size_t)n * so, err);
out:
  MTC(arena_close)(&a);
  return st;
}

#define MT_UN_OP(op, base, inpl)                                          \
  extern "C" mt_status MTC(op)(mt_call * call, mt_error * err) {          \
    return mt__unary_run(call, MT_OP_##op, UN_##base, inpl, &MTC(exec), err); \
  }
#include "common/unary_ops.def"
#undef MT_UN_OP
