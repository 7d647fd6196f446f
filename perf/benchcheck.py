"""perf/benchcheck.py - what perf's checks of mtcs_bench share (cli_check.py,
smoke_emu.py): running it under a time limit, reading its JSON, and named
failures collected to the end, each printed as it happens."""
import json
import subprocess
import sys


class Checks:
    def __init__(self, bench, env=None, timeout=60):
        self.bench, self.env, self.timeout = bench, env, timeout
        self.failures = []

    def run(self, *args):
        """mtcs_bench's exit status, stdout and stderr; 124 after the time
        limit (every run of these checks takes seconds: a long one is a
        failure, not a hang)."""
        try:
            p = subprocess.run([self.bench, *args], env=self.env, capture_output=True, text=True,
                               timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return 124, "", f"timed out after {self.timeout} s: {' '.join(args)[:200]}"
        return p.returncode, p.stdout, p.stderr

    def run_json(self, *args):
        """A run with --benchmark_format=json: exit status, the JSON's context,
        its iteration rows (not the aggregates of repetitions) and stderr;
        an empty context and no row when stdout is not JSON."""
        rc, out, err = self.run(*args, "--benchmark_format=json")
        try:
            doc = json.loads(out)
        except ValueError:
            return rc, {}, [], err
        rows = [b for b in doc.get("benchmarks", []) if b.get("run_type") == "iteration"]
        return rc, doc.get("context", {}), rows, err

    def check(self, ok, what):
        if not ok:
            self.failures.append(what)
            print("FAIL " + what, flush=True)

    def finish(self, name, passed):
        """Exit 1 with the failure count, or 0 with passed."""
        print(f"{name}: {len(self.failures)} failed" if self.failures else f"{name}: {passed}")
        sys.exit(1 if self.failures else 0)
