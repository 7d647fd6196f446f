/* compare.h - tolerances and the comparison of an implementation's outputs
 * with a golden case's expected outputs (DESIGN.md "Comparison").
 *
 *   kind, dtype and shape must match exactly (for masked tensors also the
 *   kind of the storage: dense data vs. COO data);
 *   masks must match exactly;
 *   values are compared only where the mask is true for masked outputs,
 *   everywhere when the case sets check_masked_out, everywhere for plain
 *   tensors;
 *   NaN equals NaN, an infinity equals only the same infinity;
 *   under `exact` and `ulp:N` a zero matches only a zero of the same sign
 *   (-0.0 != +0.0); `abs:X` and `rel:X` ignore the sign of zero;
 *   integer and bool values are compared exactly whatever the tolerance,
 *   as int64 (never through a double, which cannot hold every int64);
 *   COO outputs are compared after coalescing (indices exactly, values
 *   with the tolerance); masked outputs with sparse storage are compared
 *   by densifying data and mask.
 *
 * Tolerances (the case's `tolerance` attribute):
 *   exact    got == expected
 *   ulp:N    |got - exp| <= N * ulp(exp), ulp in the output dtype
 *   abs:X    |got - exp| <= X
 *   rel:X    |got - exp| <= X * |exp|
 */
#ifndef MT_CONF_COMPARE_H
#define MT_CONF_COMPARE_H

#include <stddef.h>

#include "mt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MT_TOLERANCE(NAME, "prefix", takes an argument) */
#define MT_TOLERANCES(X)  \
  X(EXACT, "exact", 0)    \
  X(ULP, "ulp", 1)        \
  X(ABS, "abs", 1)        \
  X(REL, "rel", 1)

typedef enum {
#define MT_X(name, str, arg) MT_TOL_##name,
  MT_TOLERANCES(MT_X)
#undef MT_X
  MT_TOL__COUNT
} mt_tol_kind;

typedef struct mt_tolerance {
  mt_tol_kind kind;
  double x;      /* N for ulp, X for abs and rel; 0 for exact */
  char text[48]; /* as written in the golden file, for messages */
} mt_tolerance;

/* Parses "exact", "ulp:N", "abs:X", "rel:X" (X a finite number >= 0).
 * INVALID_FORMAT with a message naming the string otherwise. */
mt_status mt_tolerance_parse(const char *s, mt_tolerance *out, mt_error *err);

/* The unit in the last place of x in dtype (float16/32/64, bfloat16); 1 for integer
 * and bool dtypes. ulp(0) is the smallest subnormal; ulp of the largest
 * finite value is the spacing just below it. */
double mt_ulp(double x, mt_dtype dtype);

/* Whether one element matches under tol (NaN == NaN, inf only == same inf,
 * the sign of a zero under exact/ulp, integers and bools exactly). */
int mt_elem_match(double expected, double got, const mt_tolerance *tol, mt_dtype dtype);

typedef struct mt_compare_opts {
  mt_tolerance tol;
  int check_masked_out; /* compare masked-out data too */
  /* the case's check_structure: a COO result as torch stores it, the
   * coalesced flag, nnz, indices in stored order, then the values entry by
   * entry (duplicates not summed); SEMANTICS.md SP-6 */
  int check_structure;
  /* What mt_compare_outputs calls the k-th tensor in `why` ("output",
   * default; "grad" for a gradient case's grads, where a NULL tensor on
   * either side means no gradient for that input). */
  const char *noun;
} mt_compare_opts;

/* Compares one tensor. *equal = 1 when got matches expected; otherwise 0
 * and `why` holds the first difference ("values[1, 2]: expected 0.5, got
 * 0.500000119 (diff 1.19e-07, tolerance exact); 3 of 12 compared elements
 * differ"). A got tensor that is not a valid tensor is a difference, not an
 * error. Returns MT_OK, or an error status (e.g. OUT_OF_MEMORY) when the
 * comparison itself could not be done. */
mt_status mt_compare_tensor(const mt_tensor *expected, const mt_tensor *got,
                            const mt_compare_opts *o, int *equal, char *why, size_t why_len,
                            mt_error *err);

/* Compares output lists (count first, then each output). `why` is prefixed
 * with "output K: ". */
mt_status mt_compare_outputs(int n_expected, mt_tensor *const *expected, int n_got,
                             mt_tensor *const *got, const mt_compare_opts *o, int *equal,
                             char *why, size_t why_len, mt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_COMPARE_H */
