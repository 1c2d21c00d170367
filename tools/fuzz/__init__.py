"""A differential fuzzer: random thread-level kernels (gen), run on several targets and
compared (run), and failing ones shrunk into regression tests (minimize)."""
