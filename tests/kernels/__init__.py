"""Kernels the tests compile and run, defined at module level (the frontend reads source files).

Every module lists ``EXAMPLES``: kernel name -> example launches ``(args, constants)``, where
args are NumPy arrays, scalars or ``ArrayType``s (only dtype, rank and layout matter). The
codegen test compiles each of them for every supported arch and fails for a kernel without one.
"""

MODULES = ("lecture", "numba_docs", "language", "atomics", "warp", "mathfuncs", "dtypes",
           "tiles", "numba_style", "complexes", "records", "coop")


def example(*args, **constants):
    return args, constants
