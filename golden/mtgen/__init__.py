"""mtgen - the library behind golden/generate.py (mtcs golden files, format 1).

model      the case model: Case, Result, Surprise, case_rng
inputs     input makers (seeded from the case's generator)
poison     the per-op poison table for masked-out input data
tolerance  tolerances: parse_tol, within, the float32 headroom check
run        running one case under torch
writer     HDF5 writing, MANIFEST, generator_sha256
families/  one module per op family of spec/include/mt/ops.def; each holds
           its op table once and a cases() function
"""
