#!/usr/bin/env python3
"""Writes bench_c.json, bench_torch.json, bench_facts.json: a small synthetic run
with round numbers, for tests/render_smoke.cmake. The expected ratios checked
there follow from the constants below (worked out in render_smoke.cmake).
Regenerate with: python3 tests/data/make_bench_fixture.py tests/data"""
import json
import os
import sys

N1, N16 = 1 << 20, 1 << 24
DENS = (0.1, 1, 10, 100)
STREAM = {("cpu1", N1): 20e9, ("cpu1", N16): 10e9, ("cpu2", N1): 30e9, ("cpu2", N16): 12e9}
DENSE_FRAC = {("cpu1", N1): 0.90, ("cpu1", N16): 0.95, ("cpu2", N1): 0.90, ("cpu2", N16): 0.85}
CROSS_MODEL = 35.0  # model_crossover_density on sparse rows (percent)


def name(fam, **kv):
    return fam + "".join(f"/{k}:{v}" for k, v in kv.items())


def row(nm, t_ns, bps=None, **counters):
    r = {"name": nm, "run_type": "iteration", "iterations": 100, "real_time": t_ns,
         "cpu_time": t_ns, "time_unit": "ns"}
    if bps:
        r["bytes_per_second"] = bps
    r.update(counters)
    return r


def err(nm, msg, **counters):
    r = row(nm, 0.0, **counters)
    r.update(error_occurred=True, error_message=msg, iterations=0)
    return r


def main(out):
    c, t = [], []
    dense_t = {}
    for dev in ("cpu1", "cpu2"):
        th = int(dev[3:])
        for n in (N1, N16):
            S = STREAM[(dev, n)]
            b = 20.0 * n
            for cache, k in (("warm", 1.0), ("cold", 1.3)):
                c.append(row(name("stream", impl="c", dev=dev, dtype="f32", n=n, cache=cache),
                             b / S * 1e9 * k, S / k, elements=n, threads=th, model_bytes=b))
            td = b / (DENSE_FRAC[(dev, n)] * S) * 1e9
            dense_t[(dev, n)] = td
            for d in DENS:
                nnz = round(n * d / 100)
                base = dict(elements=n, threads=th, nnz=nnz)
                kv = dict(dev=dev, dtype="f32", n=n, density=f"{d:g}")
                for cache, k in (("warm", 1.0), ("cold", 1.3)):
                    c.append(row(name("adagrad", impl="c", path="dense", **kv, cache=cache),
                                 td * k, b / (td * k) * 1e9, model_bytes=b, extra_bytes=0,
                                 **dict(base, nnz=n)))
                md = 1.08 if (dev, n) == ("cpu2", N16) else 1.05
                c.append(row(name("adagrad", impl="c", path="masked_dense", **kv, cache="warm"),
                             td * md, b / (td * md) * 1e9, model_bytes=b, extra_bytes=0,
                             **dict(base, nnz=n)))
                mb = 36.0 * nnz
                ts = mb / (0.5 * S) * 1e9 + 2000
                sp = dict(model_bytes=mb, extra_bytes=16 * nnz,
                          peak_rss_bytes=12 * n + 24 * nnz + 50 * 2**20,
                          model_crossover_density=CROSS_MODEL)
                c.append(row(name("adagrad", impl="c", path="sparse_coo", **kv, cache="warm"),
                             ts, mb / ts * 1e9, **base, **sp))
                ms = 1.3 if ((dev, n, d) == ("cpu2", N1, 0.1)) else 1.1
                c.append(row(name("adagrad", impl="c", path="masked_sparse", **kv, cache="warm"),
                             ts * ms, mb / (ts * ms) * 1e9, **base, **sp))
                hb = 20.125 * nnz
                th_ = hb / (0.8 * S) * 1e9 + 1000
                c.append(row(name("adagrad", impl="c", path="hybrid_coo", **kv, cache="warm"),
                             th_, hb / th_ * 1e9, model_bytes=hb, extra_bytes=0, **base))
                # torch peers on the sparse paths
                sk = 12.0 if d == 0.1 else 10.0
                t.append(row(name("adagrad", impl="torch_sparse", path="sparse_coo", **kv,
                                  cache="warm"), ts * sk, mb / (ts * sk) * 1e9, model_bytes=mb,
                             **base))
                t.append(row(name("adagrad", impl="torch_sparse", path="hybrid_coo", **kv,
                                  cache="warm"), th_ * 4, hb / (th_ * 4) * 1e9, model_bytes=hb,
                             **base))
                mnm = name("adagrad", impl="torch_masked", path="masked_sparse", **kv, cache="warm")
                if n == N1 and d <= 1:
                    t.append(row(mnm, ts * ms * 400, mb / (ts * ms * 400) * 1e9,
                                 model_bytes=mb, **base))
                else:
                    t.append(err(mnm, "skipped: the MaskedTensor path takes seconds per step; "
                                      "run for n <= 1048576 and density <= 1%", **base))
            kv = dict(dev=dev, dtype="f32", n=n, density="100", cache="warm")
            fk = 1.05 if (dev, n) == ("cpu2", N16) else 1.25
            for impl, k in (("torch_default", 2.5), ("torch_foreach", 1.8), ("torch_fused", fk)):
                t.append(row(name("adagrad", impl=impl, path="dense", **kv), td * k,
                             b / (td * k) * 1e9, elements=n, threads=th, nnz=n, model_bytes=b))
    for n in (N1, N16):
        kv = dict(dev="cuda", dtype="f32", n=n)
        c.append(err(name("adagrad", impl="c", path="dense", **kv, density="100", cache="warm"),
                     "no device", elements=n))
        c.append(err(name("stream", impl="c", **kv, cache="warm"), "no device", elements=n))
        t.append(err(name("adagrad", impl="torch_fused", path="dense", **kv, density="100",
                          cache="warm"), "no device", elements=n))
    # SparseAdam and sparse SGD (render.py's section of their own): round numbers.
    # sparse_adam, cpu1 1M 1%: 100 us moving 2 MB = 20 GB/s = the stream kernel's
    # (1.00), pair_ratio 8 (8.00x Adagrad's dense step, paired), torch 2.5 ms (25.0x)
    kv = dict(dev="cpu1", dtype="f32", n=N1, density="1", cache="warm")
    c.append(row(name("sparse_adam", impl="c", path="sparse_coo", **kv), 1e5, 2e10,
                 model_bytes=2e6, pair_ratio=8.0, model_crossover_density=33.6, elements=N1,
                 threads=1, nnz=10486))
    t.append(row(name("sparse_adam", impl="torch_sparse", path="sparse_coo", **kv), 2.5e6,
                 elements=N1, threads=1, nnz=10486))
    # sgd hybrid, cpu2 16M 10%: a quarter of the dense step's time (4.00x, not paired),
    # at half the stream kernel's bandwidth (0.50); no torch row
    td = dense_t[("cpu2", N16)] / 4
    kv = dict(dev="cpu2", dtype="f32", n=N16, density="10", cache="warm")
    c.append(row(name("sgd", impl="c", path="hybrid_coo", **kv), td, 6e9,
                 model_bytes=6e9 * td * 1e-9, model_crossover_density=99.4, elements=N16,
                 threads=2, nnz=1677696))
    cctx = {"date": "2025-01-01T00:00:00+00:00", "host_name": "fixture", "executable":
            "build/release/perf/mtcs_bench", "num_cpus": 2, "mhz_per_cpu": 2800,
            "cpu_scaling_enabled": False, "caches": [
                {"type": "Data", "level": 1, "size": 32768, "num_sharing": 1},
                {"type": "Unified", "level": 2, "size": 1048576, "num_sharing": 1},
                {"type": "Unified", "level": 3, "size": 33554432, "num_sharing": 2}],
            "load_avg": [0.5, 0.4, 0.3], "library_build_type": "release",
            "mtcs_compiler": "GNU 12.2.0", "mtcs_c_flags": "-O3 -fno-math-errno -DNDEBUG"}
    tctx = {"date": "2025-01-01T00:01:00+00:00", "host_name": "fixture", "num_cpus": 2,
            "library_build_type": "release", "torch_version": "2.15.0",
            "torch_default_cpu": "single_tensor (for-loop)", "torch_threads_cpuN": 2}
    facts = {"date": "2025-01-01 00:00 UTC", "mode": "fixture",
             "cpu": "Synthetic CPU @ 2.80GHz", "cores": 2, "memory": "24 GiB", "gpu": "none"}
    for fn, doc in (("bench_c.json", {"context": cctx, "benchmarks": c}),
                    ("bench_torch.json", {"context": tctx, "benchmarks": t}),
                    ("bench_facts.json", facts)):
        with open(os.path.join(out, fn), "w") as f:
            if "benchmarks" in doc:  # one benchmark per line: small, diffable
                f.write('{"context": ' + json.dumps(doc["context"]) + ',\n"benchmarks": [\n')
                f.write(",\n".join(json.dumps(b, separators=(",", ":")) for b in doc["benchmarks"]))
                f.write("\n]}\n")
            else:
                json.dump(doc, f, indent=1)
                f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
