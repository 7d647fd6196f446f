"""h5check.py - what the torch-free tests of golden/'s HDF5 tools share
(tests/h5layout_test.py, tests/carry_test.py): run as

    /usr/bin/python3 tests/<test>.py SRC WORKDIR

under Debian's h5py (the h5py golden/variants.py writes with); without
h5py and numpy the test is skipped (exit 77, ctest's SKIP_RETURN_CODE).

    from h5check import check, finish      # after sys.path has tests/
    SRC, WORK = h5check.setup()            # exits 77 without h5py; golden/ on sys.path
"""
import os
import sys

failures = []


def setup():
    """(SRC, WORK) from the command line, with golden/ on sys.path; exits 77
    (SKIP) when this Python has no h5py or numpy."""
    try:
        import h5py  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        print(f"SKIP: {sys.executable} has no h5py/numpy ({e}); .ci/setup.sh installs "
              "python3-h5py")
        sys.exit(77)
    src, work = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(src, "golden"))
    return src, work


def check(name, ok, detail=""):
    """One line, ok or FAIL (with detail); a FAIL fails the test at finish()."""
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail and not ok else ''}")
    if not ok:
        failures.append(name)


def finish():
    print(f"{len(failures)} failed" if failures else "all passed")
    sys.exit(1 if failures else 0)
