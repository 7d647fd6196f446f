#!/usr/bin/env python3
"""to_x86.py - CUDA's libdevice (LLVM bitcode for nvptx64) compiled for the
host, so that the emulation can run the device's own math library
(tests/libdevice/README.md).

    to_x86.py LIBDEVICE.bc OUT.o --llvm-dis P --opt P --llc P

Steps, all on the text of the module:
  - the target becomes x86_64 (datalayout and triple); the constant tables'
    addrspace(1) goes (libdevice has no addrspacecast);
  - every NVVM intrinsic call @llvm.nvvm.X.Y becomes a call of shim_X_Y
    (tests/libdevice/shim.c), @__nvvm_reflect one of shim_nvvm_reflect;
  - each inline PTX asm (11 distinct strings in CUDA 13's libdevice:
    rcp/rsqrt approximations, sub.rn, a select on "equal or unordered",
    32/64-bit wide multiply-adds and 128-bit adds) becomes a call of a
    function written here in IR with the instruction's meaning; an asm this
    script does not know is an error naming it, never passed through;
  - only the C math functions (__nv_exp, __nv_expf, ...) stay external
    (opt -internalize -globaldce), so the object needs only the shims those
    reach; llc then emits a position-independent object.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# the functions of <math.h> whose libdevice versions (__nv_<name>, and
# __nv_<name>f for float) the emulation may call (libdevice_math.h)
C_MATH = """acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh erf erfc
erfcinv erfinv exp exp2 exp10 expm1 fabs fdim floor fma fmax fmin fmod frexp hypot
ilogb ldexp lgamma log log10 log1p log2 logb modf nearbyint nextafter pow remainder
remquo rint round rsqrt scalbn sin sinh sqrt tan tanh tgamma trunc""".split()

X86_LAYOUT = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"

WIDE = """  %lo = trunc i{w2} %s to i{w}
  %s2 = lshr i{w2} %s, {w}
  %hi = trunc i{w2} %s2 to i{w}
  %r0 = insertvalue {{i{w}, i{w}}} undef, i{w} %lo, 0
  %r = insertvalue {{i{w}, i{w}}} %r0, i{w} %hi, 1
  ret {{i{w}, i{w}}} %r
}}"""


def asm_body(name, text):
    """The IR function that does what the PTX text does, or None."""
    if text.startswith("rcp.approx.ftz.f32"):
        return ("define internal float @%s(float %%x) {\n  %%r = fdiv float 1.0, %%x\n"
                "  ret float %%r\n}" % name)
    if text.startswith("rsqrt.approx.ftz.f64"):
        return ("define internal double @%s(double %%x) {\n"
                "  %%r = call double @shim_rsqrt_approx_d(double %%x)\n  ret double %%r\n}" % name)
    if text.startswith("sub.rn.f32") or text.startswith("sub.rn.ftz.f32"):
        # the .ftz form: operands and result are never subnormal where libdevice uses it
        return ("define internal float @%s(float %%a, float %%b) {\n  %%r = fsub float %%a, %%b\n"
                "  ret float %%r\n}" % name)
    if text.startswith("sub.rn.f64"):
        return ("define internal double @%s(double %%a, double %%b) {\n"
                "  %%r = fsub double %%a, %%b\n  ret double %%r\n}" % name)
    if "setp.equ.f64" in text and "selp.f64" in text:
        return ("define internal double @%s(double %%a, double %%b, double %%x, double %%y) {\n"
                "  %%c = fcmp ueq double %%a, %%b\n  %%r = select i1 %%c, double %%x, double %%y\n"
                "  ret double %%r\n}" % name)
    if "add.cc.u32" in text or "sub.cc.u32" in text:  # 128-bit (hi:lo) a +- b
        op = "add" if "add.cc.u32" in text else "sub"
        return ("define internal {i64, i64} @%s(i64 %%a0, i64 %%a1, i64 %%b0, i64 %%b1) {\n"
                "  %%al = zext i64 %%a0 to i128\n  %%ah0 = zext i64 %%a1 to i128\n"
                "  %%ah = shl i128 %%ah0, 64\n  %%a = or i128 %%al, %%ah\n"
                "  %%bl = zext i64 %%b0 to i128\n  %%bh0 = zext i64 %%b1 to i128\n"
                "  %%bh = shl i128 %%bh0, 64\n  %%b = or i128 %%bl, %%bh\n"
                "  %%s = %s i128 %%a, %%b\n" % (name, op) + WIDE.format(w=64, w2=128))
    if "clo,chi" in text:  # a * b + c, 64-bit operands, 128-bit result
        return ("define internal {i64, i64} @%s(i64 %%a, i64 %%b, i64 %%c) {\n"
                "  %%x = zext i64 %%a to i128\n  %%y = zext i64 %%b to i128\n"
                "  %%z = zext i64 %%c to i128\n  %%p = mul i128 %%x, %%y\n"
                "  %%s = add i128 %%p, %%z\n" % name + WIDE.format(w=64, w2=128))
    if "mul.lo.u32      r0, alo, blo" in text:  # a * b, 64-bit operands, 128-bit result
        return ("define internal {i64, i64} @%s(i64 %%a, i64 %%b) {\n"
                "  %%x = zext i64 %%a to i128\n  %%y = zext i64 %%b to i128\n"
                "  %%s = mul i128 %%x, %%y\n" % name + WIDE.format(w=64, w2=128))
    if re.match(r"\{\\0A\\09mad\.lo\.cc\.u32 +\$0, \$2, \$3, \$4;\\0A\\09madc\.hi\.u32 +\$1, "
                r"\$2, \$3, +0;\\0A\\09\}$", text):  # a * b + c, 32-bit operands, 64-bit result
        return ("define internal {i32, i32} @%s(i32 %%a, i32 %%b, i32 %%c) {\n"
                "  %%x = zext i32 %%a to i64\n  %%y = zext i32 %%b to i64\n"
                "  %%z = zext i32 %%c to i64\n  %%p = mul i64 %%x, %%y\n"
                "  %%s = add i64 %%p, %%z\n" % name + WIDE.format(w=32, w2=64))
    return None


def retarget(text):
    """x86_64 target, flat address space, intrinsics renamed; and the
    functions to keep."""
    if 'target triple = "nvptx64' not in text:
        sys.exit("to_x86.py: not an nvptx64 libdevice module")
    if "addrspacecast" in text:
        sys.exit("to_x86.py: the module casts between address spaces; the flattening of "
                 "addrspace(1) would be wrong")
    text = re.sub(r'target datalayout = "[^"]*"', 'target datalayout = "%s"' % X86_LAYOUT, text)
    text = re.sub(r'target triple = "[^"]*"', 'target triple = "x86_64-pc-linux-gnu"', text)
    text = text.replace(" addrspace(1)", "")
    for n in sorted(set(re.findall(r"@llvm\.nvvm\.[a-z0-9_.]+", text)), key=len, reverse=True):
        text = text.replace(n + "(", "@shim_" + n[len("@llvm.nvvm."):].replace(".", "_") + "(")
    text = text.replace("@__nvvm_reflect(", "@shim_nvvm_reflect(")
    keep = sorted({d for d in re.findall(r"define [^@]*@(__nv_[a-z0-9_]+)\(", text)
                   if d[5:] in C_MATH or (d.endswith("f") and d[5:-1] in C_MATH)})
    return text, keep


def replace_asm(text):
    """Each inline PTX asm of what is kept as a call of an IR function."""
    shims, bodies = {}, []
    pat = re.compile(r'call (\{[^}]*\}|float|double|i32|i64) asm (?:sideeffect )?'
                     r'"((?:[^"\\]|\\.)*)", "([^"]*)"\(([^)]*)\)')

    def rep(m):
        ret, asm, cons, args = m.groups()
        key = (ret, asm, cons)
        if key not in shims:
            name = "shim_asm%d" % len(shims)
            body = asm_body(name, asm)
            if body is None:
                sys.exit("to_x86.py: an inline asm this script does not know: %r" % asm[:120])
            shims[key] = name
            bodies.append(body)
        return "call %s @%s(%s)" % (ret, shims[key], args)

    text = pat.sub(rep, text)
    if re.search(r"\basm\b", text):
        sys.exit("to_x86.py: an inline asm is left that the pattern did not match")
    text = re.sub(r", !srcloc ![0-9]+", "", text)
    if "@shim_rsqrt_approx_d(" in "".join(bodies) and \
            not re.search(r"declare [^@]*@shim_rsqrt_approx_d\(", text):
        text += "\ndeclare double @shim_rsqrt_approx_d(double)\n"
    return text + "\n" + "\n".join(bodies) + "\n", len(shims)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bc")
    ap.add_argument("out")
    ap.add_argument("--llvm-dis", default="llvm-dis")
    ap.add_argument("--opt", default="opt")
    ap.add_argument("--llc", default="llc")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        ll = os.path.join(d, "libdevice.ll")
        subprocess.run([a.llvm_dis, a.bc, "-o", ll], check=True)
        with open(ll) as f:
            text, keep = retarget(f.read())
        x86 = os.path.join(d, "x86.ll")
        with open(x86, "w") as f:
            f.write(text)
        kept = os.path.join(d, "kept.ll")
        subprocess.run([a.opt, "-S", "-internalize", "-internalize-public-api-list=" +
                        ",".join(keep), "-globaldce", x86, "-o", kept], check=True)
        with open(kept) as f:
            text, nasm = replace_asm(f.read())
        final = os.path.join(d, "final.ll")
        with open(final, "w") as f:
            f.write(text)
        subprocess.run([a.llc, "-O2", "-relocation-model=pic", "-filetype=obj", final,
                        "-o", a.out], check=True)
    print("to_x86.py: %s: %d math functions kept, %d inline asm replaced" % (a.out, len(keep), nasm))


if __name__ == "__main__":
    main()
