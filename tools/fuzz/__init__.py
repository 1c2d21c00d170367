"""A differential fuzzer: random thread-level kernels (gen) and tile kernels (tile_gen, with a
float64 reference: tile_prog, tile_ref), run on several targets and compared (run, tile_run),
and failing ones shrunk into regression tests (minimize)."""
