/* golden_io.h - reading golden files (format version 1, DESIGN.md "Golden
 * files", spec/golden-format.md) into mt_tensor views, and writing a
 * one-case golden file (repro bundles).
 *
 * Reading is lenient about how a conforming writer encodes things and
 * strict about what they mean: string attributes may be variable- or
 * fixed-length, integers of any width, bools uint8 or h5py's enum, an
 * empty `shape` a null or a zero-size dataspace, float16 data is converted
 * to IEEE half bits, bfloat16 data (stored as float32) to bfloat16 bits,
 * refusing a value that is not exactly a bfloat16. Everything read is
 * checked (sizes, types, element counts, mt_tensor_validate); every failure is an mt_error naming the file,
 * the case and the object path:
 *   "golden/reduce.h5: case sum.masked.f32.basic: inputs/0/values: dataset
 *    has 11 elements, shape [3, 4] needs 12"
 * Strict about inputs: a case's kwargs must be those its op takes, with
 * values of accepted types (spec/include/mt/kwargs.def), and every
 * `outputs@<label>` must name a torch version (mt_golden_variant_label_valid).
 * Statuses: IO_ERROR (cannot open/read), INVALID_FORMAT (anything not
 * format v1), OUT_OF_MEMORY.
 *
 * mt_golden_open reads the root attributes and every case's attributes
 * (the "header"); the tensors of a case are read on demand by
 * mt_golden_load, so a large file is never held in memory at once. */
#ifndef MT_CONF_GOLDEN_IO_H
#define MT_CONF_GOLDEN_IO_H

#include <stdint.h>

#include "compare.h"
#include "mt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MT_GOLDEN_FORMAT "mtcs-golden"
/* the version this mtcs writes; it reads every version from 1 up to it
 * (version 2 added the csc/bsr/bsc kinds and batched/hybrid csr, version 3
 * gradient cases: attribute backward, groups grad_outputs/ and grads/) */
#define MT_GOLDEN_FORMAT_VERSION 3
#define MT_GOLDEN_FORMAT_VERSION_MIN 1
/* Refused before allocating: a golden tensor above this many bytes. */
#define MT_GOLDEN_MAX_TENSOR_BYTES ((int64_t)1 << 30)
#define MT_GOLDEN_MAX_INPUTS 64
#define MT_GOLDEN_MAX_KWARGS 64
#define MT_GOLDEN_MAX_VARIANTS 32

/* Root attributes. Strings are NULL when absent (all but format and
 * format_version are optional for reading). */
typedef struct mt_golden_meta {
  char *format;
  int64_t format_version;
  char *generator;
  char *generator_sha256;
  char *torch_version;
  char *numpy_version;
  char *created_utc;
} mt_golden_meta;

/* Outputs recorded for another torch version: group `outputs@<label>`,
 * label e.g. "torch-2.1". */
typedef struct mt_golden_variant {
  char *label;
  int n_out;
  mt_tensor **out;
} mt_golden_variant;

/* An error recorded for another torch version: attribute `error@<label>`
 * of the case group, e.g. error@torch-1.13.1 = "INVALID_ARGUMENT": that
 * torch raises (the status an implementation returns) where the file's
 * torch returns outputs (spec/golden-format.md, "Output variants"). */
typedef struct mt_golden_error_variant {
  char *label;
  char *error_class; /* a status name of status.def, not OK */
} mt_golden_error_variant;

typedef struct mt_golden_case {
  /* ---- header: the case group's attributes ---- */
  char *id;            /* the group name under /cases */
  char *op_name;       /* `op` as written */
  mt_op op;            /* MT_OP__NONE when op_name is not in ops.def */
  char *profile;       /* "torch" when absent */
  char *rules;         /* "" when absent */
  char *tolerance_str; /* "exact" when absent */
  mt_tolerance tolerance;
  int expect_error;    /* expect == "error" */
  char *error_class;   /* expect_error: a status name of status.def */
  char *torch_error;   /* may be NULL */
  char *torch_call;    /* may be NULL */
  char *poison;        /* may be NULL */
  int check_masked_out;
  int check_structure; /* COO outputs compared as stored (SP-6) */
  /* A gradient case (format 3, attribute backward = 1): the call is the
   * op's backward (mt_impl.backward). Loaded, in[] holds the forward inputs
   * (n_fwd_in of them) followed by grad_outputs/0.. (n_grad_out), so the
   * runner's CALL-1 and MASK-9 reach the upstream gradients too; out[] holds
   * grads/<k> for k < n_fwd_in, NULL where torch gives input k none. */
  int backward;
  int n_fwd_in;
  int n_grad_out;
  /* `input_masks` ("0:1,2:3": input 0 is specified where input 1 is true):
   * input_mask_of[k] is 1 + the index of the input that masks plain input
   * k, 0 for none (so a zeroed case has none).
   * The poison re-runs (MASK-9) reach those plain inputs too. */
  int input_mask_of[MT_GOLDEN_MAX_INPUTS];
  const char *file_torch_version; /* borrowed: the file's root torch_version (may be NULL) */
  int n_labels;        /* every label of an outputs@ group or error@ attribute */
  char **labels;       /* ("torch-1.13.1"), in name order, no duplicates */
  int n_error_variants;
  mt_golden_error_variant *error_variants;
  /* ---- body: read by mt_golden_load ---- */
  int loaded;
  int n_in;
  mt_tensor **in;
  mt_kwargs kw;         /* items owned by the case */
  int n_out;
  mt_tensor **out;
  int n_variants;
  mt_golden_variant *variants;
} mt_golden_case;

typedef struct mt_golden_file {
  char *path;
  mt_golden_meta meta;
  int n_cases;
  mt_golden_case *cases; /* sorted by id (HDF5 name order) */
  int64_t h5;            /* the open file (an hid_t) */
} mt_golden_file;

/* Opens path, checks format/format_version and reads every case header. */
mt_status mt_golden_open(const char *path, mt_golden_file **out, mt_error *err);
/* Reads c's inputs, kwargs, outputs and output variants (idempotent). */
mt_status mt_golden_load(mt_golden_file *f, mt_golden_case *c, mt_error *err);
/* Frees what mt_golden_load read; the header stays. */
void mt_golden_unload(mt_golden_case *c);
void mt_golden_close(mt_golden_file *f); /* NULL is fine */
/* Reads c's inputs and kwargs only (an adapter request, spec/adapter-protocol.md,
 * holds no outputs); c->loaded is set, mt_golden_unload frees them. */
mt_status mt_golden_load_inputs(mt_golden_file *f, mt_golden_case *c, mt_error *err);

/* Reads an adapter's response file (spec/adapter-protocol.md): the tensor
 * groups outputs/0..n-1 at the root, each read and checked exactly as a
 * golden output is; or, answering a gradient case, grads/<k> (*n_out is
 * one past the largest k, NULL where a k below it is absent). *out: n tensors (free each with mt_tensor_free, then
 * the array). IO_ERROR (missing, unreadable) or INVALID_FORMAT (not HDF5,
 * no outputs, a malformed tensor) with a message naming path and object. */
mt_status mt_golden_read_outputs(const char *path, int *n_out, mt_tensor ***out, mt_error *err);

/* 1 when label (what follows "outputs@") names a torch version by the
 * grammar of spec/golden-format.md: "torch-" and a PEP 440 version as
 * torch.__version__ writes it (torch-2.1, torch-2.4.0a0+git1234abc,
 * torch-2.6.0.dev20241112+cpu). mt_golden_load refuses any other label. */
int mt_golden_variant_label_valid(const char *label);

/* Writes a golden file holding one (loaded) case, with root attributes from
 * meta (format and format_version are always "mtcs-golden" and
 * MT_GOLDEN_FORMAT_VERSION; a NULL
 * meta or NULL strings leave the others out). Strings are written as
 * variable-length UTF-8, bools as uint8 (kwargs: h5py's enum bool), like
 * h5py. Atomic: a temporary file in the same directory, then rename. */
mt_status mt_golden_write_case(const char *path, const mt_golden_meta *meta,
                               const mt_golden_case *c, mt_error *err);

/* An adapter request (spec/adapter-protocol.md): a golden file holding
 * case c alone with the attributes op, profile, rules and tolerance, the
 * inputs `in` (c's own, or a poisoned copy) and c's kwargs; no outputs and
 * no expectation (expect, error_class, torch_error, torch_call). Atomic. */
mt_status mt_golden_write_request(const char *path, const mt_golden_case *c, int n_in,
                                  const mt_tensor *const *in, mt_error *err);

/* An adapter response: the groups outputs/0..n-1 at the root of path
 * (the adapter fixture writes them; so can any C adapter). Atomic. */
mt_status mt_golden_write_outputs(const char *path, int n, const mt_tensor *const *out,
                                  mt_error *err);

/* A gradient response: grads/<k> at the root of path for each non-NULL
 * grads[k], k < n (spec/adapter-protocol.md, "Gradient requests"). Atomic. */
mt_status mt_golden_write_grads(const char *path, int n, const mt_tensor *const *grads,
                                mt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_GOLDEN_IO_H */
