#!/usr/bin/env python3
"""golden_coverage.py - the op table, the rules and the goldens agree.

    python3 tests/golden_coverage.py MTCS SRC

Fails (exit 1, one line per problem) when
  - an op of spec/include/mt/ops.def has no golden case of profile torch;
  - an op of impl/cpu/npma_ops.def (the numpy_ma profile) has no golden
    case of profile numpy_ma, or is not an op of ops.def;
  - a case names a rule that spec/SEMANTICS.md does not define, or a rule
    that ops.def (npma_ops.def for a case of profile numpy_ma) does not list
    for the case's op;
  - ops.def lists a rule that SEMANTICS.md does not define;
  - a rule of SEMANTICS.md is covered by no case and names no unit test,
    or names a unit test (`file.c: test_name`) that does not exist;
  - a glob on a rule's `Cases:` line matches no case, or matches a case
    that is not tagged with that rule (the rules and the cases disagree);
    the globs of NPMA-* rules (the numpy_ma profile) are matched against
    the numpy_ma cases only, the other rules' against the torch cases;
  - a rule does not name its level (one line `Level: semantic.` or
    `Level: strict.`);
  - an op of ops.def has no torch-profile case in one of mtcs's dtypes
    (the third field of the case id: f16 f32 f64 i64 i32 i8 u8 bool bf16; a
    case of torch's refusal counts), unless DTYPE_GAPS below lists that gap
    with its reason;
  - an op of the unary, binary, reduce or structure family has no
    torch-profile case with a COO input or none with a CSR input (the
    second field of the case id, its layouts, names `coo` / `csr`; a case
    of torch's refusal counts), unless LAYOUT_GAPS lists that gap with its
    reason (SP-1 .. SP-4);
  - an op of ops.def has no gradient case (golden format 3, `mtcs list`'s
    call column: backward) and no line in spec/no-gradient-*.tsv saying why,
    or has both, or that file names an op ops.def does not have.
Standard library only: the test command needs no venv."""
import fnmatch
import glob
import os
import re
import subprocess
import sys

PARAGRAPH = r"(.*?)(?:\n\n|\n(?=[A-Za-z.]+:)|\Z)"

DTYPES = ("f16", "f32", "f64", "i64", "i32", "i8", "u8", "bool", "bf16")
UINT8 = "torch.masked refuses uint8 data (`masked_tensor.dense.u8.dtype_refused`): no " \
        "MaskedTensor op ever receives it"
BFLOAT16 = "torch.masked refuses bfloat16 data (`masked_tensor.dense.bf16.dtype_refused`): no " \
           "MaskedTensor op ever receives it (the sparse COO/CSR cases of these ops, which " \
           "could, are float32/float64 in this slice)"
SPS_REFUSED = "torch refuses the op on every plain sparse layout before it reads an element " \
              "(SPS-0): the float32 refusal stands for every dtype"
# (op glob, dtypes without a case, why[, op globs the line does not cover]).
# Every gap here is a known hole or a dtype the op cannot receive; a new op
# without every dtype fails until its cases or its line here say why.
DTYPE_GAPS = [
    ("*", ("u8",), UINT8),
    # torch.masked's functional ops take plain tensors, the optimizers plain
    # params: bfloat16 reaches them (sparse_adam and sgd have bf16 cases)
    ("*", ("bf16",), BFLOAT16, ("masked_*", "adagrad_dense", "adagrad_sparse", "sparse_adam",
                                "sgd")),
    # sparse_misc (SPS-*): torch refuses these on every plain sparse layout
    # before it reads an element, so the float32 refusal stands for each dtype
    ("nonzero", ("f16", "f64", "i64", "i32", "i8", "bool"), SPS_REFUSED),
    ("narrow", ("f16", "f64", "i64", "i32", "i8", "bool"), SPS_REFUSED),
    ("max", ("f16", "f64", "i64", "i32", "i8", "bool"), SPS_REFUSED),
] + [(op, ("i8",), "int8 is one more integer dtype through the int32/int64 kernels; the plain "
        "sparse ops take f16, bf16, i64, i32 and bool beside f32/f64 (issue 11), int8 left out "
        "for the golden size budget")
       for op in ("zero_", "t_", "narrow_copy", "index_select", "sparse_softmax",
                  "sparse_log_softmax", "sparse_sum", "sparse_resize_", "sparse_resize_and_clear_")]


# The families whose every op must meet sparse storage (SP-1 .. SP-4).
SPARSE_FAMILIES = ("unary", "binary", "reduce", "structure")
SPARSE_LAYOUTS = ("coo", "csr")
ALIAS = "an alias: torch runs its base op's kernel and storage path, whose COO and CSR " \
        "cases stand for it (golden file size)"
# (op glob, layouts without a case, why), as DTYPE_GAPS.
LAYOUT_GAPS = [
    (f"{a}{inplace}", SPARSE_LAYOUTS, ALIAS)
    for a in ("absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "clip",
              "fix", "negative", "sgn",  # unary (unary.py ALIASES)
              "subtract", "multiply", "divide", "true_divide", "arctan2", "not_equal",
              "less_equal", "greater_equal", "greater", "less")  # binary (binary.py ALIASES)
    for inplace in ("", "_")
]


def layout_gap_reason(op, layout):
    """Why op may lack a case with a `layout` input, or None."""
    for pat, lays, why in LAYOUT_GAPS:
        if fnmatch.fnmatchcase(op, pat) and layout in lays:
            return why
    return None


def dtype_gap_reason(op, dtype):
    """Why op may lack dtype, or None."""
    for pat, dts, why, *unless in DTYPE_GAPS:
        if any(fnmatch.fnmatchcase(op, u) for u in (unless[0] if unless else ())):
            continue
        if fnmatch.fnmatchcase(op, pat) and dtype in dts:
            return why
    return None


NO_GRADIENT = "spec/no-gradient-*.tsv"


def gradient_problems(src, ops, backward_ops):
    """Every op of ops.def has gradient cases, or a line `<op>\t<reason>` in
    one of spec/no-gradient-*.tsv saying why it has none (torch gives none, or the
    gap is known); never both, and every line names an op of ops.def."""
    problems, reasons = [], {}
    paths = sorted(glob.glob(f"{src}/{NO_GRADIENT}"))
    if not paths:
        problems.append(f"no {NO_GRADIENT} file")
    for path in paths:
        name = os.path.relpath(path, src)
        for n, line in enumerate(open(path), 1):
            if not line.strip() or line.startswith("#"):
                continue
            op, _, why = line.rstrip("\n").partition("\t")
            if not why.strip():
                problems.append(f"{name}:{n}: op {op} has no reason (`<op><TAB><reason>`)")
            elif op in reasons:
                problems.append(f"{name}:{n}: op {op} is listed twice")
            reasons[op] = why
            if op not in ops:
                problems.append(f"{name}:{n}: op {op} is not in ops.def")
            elif op in backward_ops:
                problems.append(f"{name}:{n}: op {op} has {backward_ops[op]} gradient cases: "
                                "remove its line")
    for op in ops:
        if op not in backward_ops and op not in reasons:
            problems.append(f"op {op}: no gradient case and no line in {NO_GRADIENT} saying why")
    return problems


def main(mtcs, src):
    problems = []
    ops = {}  # name -> set of rules
    family = {}  # name -> family
    for line in open(f"{src}/spec/include/mt/ops.def"):
        m = re.match(r'MT_OP\(\s*\d+,\s*(\w+),\s*(\w+),\s*"([^"]*)"\)', line)
        if m:
            ops[m.group(1)] = set(filter(None, m.group(3).split(",")))
            family[m.group(1)] = m.group(2)

    npma = {}  # the numpy_ma profile: name -> set of rules
    for line in open(f"{src}/impl/cpu/npma_ops.def"):
        m = re.match(r'MT_NPMA_OP\(\s*(\w+),\s*"([^"]*)"\)', line)
        if m:
            npma[m.group(1)] = set(filter(None, m.group(2).split(",")))
    for op in npma:
        if op not in ops:
            problems.append(f"npma_ops.def: op {op} is not in ops.def")

    listing = subprocess.run([mtcs, "list"], capture_output=True, text=True, check=True).stdout
    # the ids of the numpy_ma cases (`mtcs list` prints no profile column)
    npma_listing = subprocess.run([mtcs, "list", "--profile", "numpy_ma"], capture_output=True,
                                  text=True, check=False).stdout
    npma_ids = {ln.split()[0] for ln in npma_listing.splitlines()[1:] if ln.split()}
    cases = []  # (id, op, rules)
    backward_ops = {}  # op -> its gradient cases (`mtcs list`'s call column: backward)
    backward_ids = set()
    for line in listing.splitlines()[1:]:
        f = line.split()
        if len(f) >= 3 and f[1] in ops or (len(f) >= 3 and "." in f[0]):
            cases.append((f[0], f[1], set(f[2].split(","))))
            if len(f) >= 5 and f[4] == "backward":
                backward_ops[f[1]] = backward_ops.get(f[1], 0) + 1
                backward_ids.add(f[0])
    problems += gradient_problems(src, ops, backward_ops)

    sem = open(f"{src}/spec/SEMANTICS.md").read()
    sections = re.split(r"^### ", sem, flags=re.M)[1:]
    rules, globs = {}, {}
    for s in sections:
        rid = s.split()[0]
        tests = []
        levels = re.findall(r"^Level: (\w+)\.\s*$", s, re.M)
        if len(levels) != 1 or levels[0] not in ("semantic", "strict"):
            problems.append(f"rule {rid}: needs exactly one line `Level: semantic.` or "
                            f"`Level: strict.` (found {levels or 'none'})")
        globs[rid] = [g for m in re.finditer(r"^Cases: " + PARAGRAPH, s, re.M | re.S)
                      for tok in re.findall(r"`([^`]+)`", m.group(1)) for g in tok.split()]
        for m in re.finditer(r"^Tests: " + PARAGRAPH, s, re.M | re.S):
            cur = None
            for tok in re.findall(r"`([^`]+)`", m.group(1)):
                if ":" in tok:
                    cur, tok = [x.strip() for x in tok.split(":", 1)]
                tests.append((cur, tok))
        rules[rid] = tests

    case_count = {r: 0 for r in rules}
    per_op = {op: 0 for op in ops}
    per_npma_op = {op: 0 for op in npma}
    for cid, op, rs in cases:
        if op not in ops:
            problems.append(f"case {cid}: op '{op}' is not in ops.def")
            continue
        is_npma = cid in npma_ids
        if is_npma:
            per_npma_op[op] = per_npma_op.get(op, 0) + 1
        else:
            per_op[op] += 1
        table, table_name = (npma, "npma_ops.def") if is_npma else (ops, "ops.def")
        for r in rs:
            if r not in rules:
                problems.append(f"case {cid}: rule {r} is not defined in spec/SEMANTICS.md")
            else:
                case_count[r] += 1
            if r not in table.get(op, ()):
                problems.append(f"case {cid}: rule {r} is not listed for op {op} in "
                                f"{table_name}")
    for op, n in per_npma_op.items():
        if n == 0 and op in npma:
            problems.append(f"op {op}: no golden case of profile numpy_ma (npma_ops.def)")
        for r in npma.get(op, ()):
            if r not in rules:
                problems.append(f"npma_ops.def: op {op} lists rule {r}, not defined in "
                                "SEMANTICS.md")
    for op, n in per_op.items():
        if n == 0:
            problems.append(f"op {op}: no golden case")
        for r in ops[op]:
            if r not in rules:
                problems.append(f"ops.def: op {op} lists rule {r}, not defined in SEMANTICS.md")
    dtypes_of = {op: set() for op in ops}
    for cid, op, _ in cases:
        if cid not in npma_ids and op in dtypes_of and cid.count(".") >= 3:
            dtypes_of[op].add(cid.split(".")[2])
    for op, seen in dtypes_of.items():
        missing = [d for d in DTYPES if d not in seen and not dtype_gap_reason(op, d)]
        if missing and seen:
            problems.append(f"op {op}: no case in dtype {', '.join(missing)} (add cases, or a "
                            "DTYPE_GAPS line in tests/golden_coverage.py saying why)")
    layouts_of = {op: set() for op in ops if family[op] in SPARSE_FAMILIES}
    for cid, op, _ in cases:
        if cid not in npma_ids and op in layouts_of and cid.count(".") >= 3:
            field = cid.split(".")[1]
            layouts_of[op].update(lay for lay in SPARSE_LAYOUTS if lay in field)
    for op, seen in layouts_of.items():
        missing = [lay for lay in SPARSE_LAYOUTS
                   if lay not in seen and not layout_gap_reason(op, lay)]
        if missing:
            problems.append(f"op {op}: no case with a {', '.join(missing).upper()} input (add "
                            "cases, or a LAYOUT_GAPS line in tests/golden_coverage.py saying why)")
    for r, tests in rules.items():
        for f, name in tests:
            path = f"{src}/tests/{f}"
            try:
                body = open(path).read()
            except OSError:
                problems.append(f"rule {r}: names tests/{f}, which does not exist")
                continue
            if f"TEST({name})" not in body:
                problems.append(f"rule {r}: tests/{f} has no TEST({name})")
        if case_count[r] == 0 and not tests:
            problems.append(f"rule {r}: no golden case and no unit test covers it")

    def op_rules(cid, op):
        table = npma if cid in npma_ids else ops
        return table.get(op, set())

    backward_rules = {r for cid, _, rs in cases if cid in backward_ids for r in rs}
    for r, pats in globs.items():
        # the globs of the numpy_ma profile's rules (NPMA-*) select among
        # its cases, the others among the torch profile's
        npma_rule = r.startswith("NPMA-")
        for pat in pats:
            # a glob selects among the cases of the ops the rule applies to
            # (ops.def / npma_ops.def list it): `*.masked.f16.*` under RED-7
            # speaks of the reductions, not of sin's float16 cases
            # and among the gradient cases for a rule gradient cases carry
            # (GRAD-*, SPG-*, MFG-*), the forward ones for the others: ids
            # `<forward id>.grad` match the forward rules' globs too
            hit = [(cid, rs) for cid, op, rs in cases if fnmatch.fnmatchcase(cid, pat)
                   and (cid in npma_ids) == npma_rule and r in op_rules(cid, op)
                   and (cid in backward_ids) == (r in backward_rules)]
            if not hit:
                problems.append(f"rule {r}: Cases: glob `{pat}` matches no case")
            for cid, rs in hit:
                if r not in rs:
                    problems.append(f"rule {r}: Cases: glob `{pat}` matches {cid}, which is "
                                    f"tagged {','.join(sorted(rs))}, not {r}")

    for r in sorted(rules):
        print(f"{r:8} {case_count[r]:4} cases  {len(rules[r])} unit tests  "
              f"{len(globs[r])} Cases: globs")
    print(f"{len(cases)} cases ({len(npma_ids)} of profile numpy_ma), {len(ops)} ops "
          f"({len(npma)} in the numpy_ma profile), {len(rules)} rules")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
