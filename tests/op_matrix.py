#!/usr/bin/env python3
"""op_matrix.py - the README's op x layout x dtype x profile matrix, generated from the
golden files (what `mtcs list` reports) and ops.def.

    python3 tests/op_matrix.py MTCS SRC            print the matrix (Markdown)
    python3 tests/op_matrix.py MTCS SRC --write    rewrite it in README.md
    python3 tests/op_matrix.py MTCS SRC --check    exit 1 if README.md's copy is stale

One row per op of spec/include/mt/ops.def, in id order: its family, the
number of golden cases per input layout (the second field of a case id,
`<op>.<layouts>.<dtype>.<variant>`, split at `_`: a case counts once under
each layout among its inputs; `masked` is a MaskedTensor whatever its
storage, the sparse columns are plain sparse tensors) and per dtype (the
third field; `error` cases count too: a layout or dtype torch refuses is
checked by its refusal), the cases per profile, the gradient cases (column
grad; `mtcs list`'s call column says backward; they count nowhere else) and
the rules.
An op without cases shows 0 everywhere: the coverage check fails on it
anyway. The README holds the table between the lines
`<!-- op-matrix:begin -->` and `<!-- op-matrix:end -->`.
Standard library only: the test command needs no venv."""
import re
import subprocess
import sys

LAYOUTS = ["masked", "dense", "coo", "csr", "csc", "bsr", "bsc"]
DTYPES = ["f16", "f32", "f64", "i64", "i32", "i8", "u8", "bool", "bf16"]
PROFILES = ["torch", "numpy_ma"]
BEGIN, END = "<!-- op-matrix:begin -->", "<!-- op-matrix:end -->"


def ops_table(src):
    ops = []
    for line in open(f"{src}/spec/include/mt/ops.def"):
        m = re.match(r'MT_OP\(\s*(\d+),\s*(\w+),\s*(\w+),\s*"([^"]*)"\)', line)
        if m:
            ops.append((int(m.group(1)), m.group(2), m.group(3), m.group(4)))
    return sorted(ops)


def cases(mtcs):
    out = subprocess.run([mtcs, "list"], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines()[1:]:
        f = line.split()
        if len(f) >= 6 and f[0].count(".") >= 3:
            rows.append((f[0], f[1], f[3], f[4]))  # id, op, profile, call
    return rows


def matrix(mtcs, src):
    per = {}
    total = {"cases": 0}
    for cid, op, profile, call in cases(mtcs):
        d = per.setdefault(op, {})
        if call == "backward":  # a gradient case: the grad column only
            d["grad"] = d.get("grad", 0) + 1
            total["grad"] = total.get("grad", 0) + 1
            continue
        dtype = cid.split(".")[2]
        d[dtype] = d.get(dtype, 0) + 1
        for layout in set(cid.split(".")[1].split("_")) & set(LAYOUTS):
            d["L:" + layout] = d.get("L:" + layout, 0) + 1
        d[profile] = d.get(profile, 0) + 1
        total["cases"] += 1
    ops = ops_table(src)
    head = ["op", "family"] + LAYOUTS + DTYPES + PROFILES + ["grad", "rules"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, name, family, rules in ops:
        d = per.get(name, {})
        keys = ["L:" + k for k in LAYOUTS] + DTYPES + PROFILES + ["grad"]
        cells = [f"`{name}`", family] + [str(d.get(k, "")) or "·" for k in keys]
        lines.append("| " + " | ".join(cells) + f" | {rules.replace(',', ', ')} |")
    n_ops = len(ops)
    n_np = sum(1 for _, n, _, _ in ops if per.get(n, {}).get("numpy_ma"))
    lines.append("")
    n_grad = sum(1 for _, n, _, _ in ops if per.get(n, {}).get("grad"))
    lines.append(f"{n_ops} ops, {total['cases']} forward cases; {n_np} ops with numpy_ma "
                 f"cases; {total.get('grad', 0)} gradient cases of {n_grad} ops. "
                 "A number is the forward golden cases of that op with an input of that "
                 "layout, in that dtype, or of that profile (torch's refusals count: they are "
                 "checked); grad: its gradient cases (golden format 3, GRAD-*; an op without "
                 "them is in spec/no-gradient-*.tsv with the reason); · none. masked: a "
                 "MaskedTensor input, whatever its storage; coo ... bsc: a plain sparse input.")
    return "\n".join(lines)


def main(argv):
    if len(argv) < 3 or (len(argv) == 4 and argv[3] not in ("--write", "--check")) or len(argv) > 4:
        sys.exit(__doc__)
    mtcs, src = argv[1], argv[2]
    table = matrix(mtcs, src)
    if len(argv) == 3:
        print(table)
        return 0
    path = f"{src}/README.md"
    text = open(path).read()
    if BEGIN not in text or END not in text:
        print(f"FAIL: {path} has no {BEGIN} ... {END} block")
        return 1
    pre, rest = text.split(BEGIN, 1)
    old, post = rest.split(END, 1)
    new = f"{pre}{BEGIN}\n{table}\n{END}{post}"
    if argv[3] == "--check":
        if old.strip() != table.strip():
            print("FAIL: README.md's op matrix is stale: run "
                  "`python3 tests/op_matrix.py build/release/mtcs . --write`")
            return 1
        print("README.md's op matrix matches the golden files")
        return 0
    with open(path, "w") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
