"""Build of the optional C modules: the launcher (threadtile.runtime._fastlaunch) and the plain
eager call of a torch operator (threadtile.runtime._eagerop); the rest of the package is
described in pyproject.toml. ``optional=True``: without a C compiler the package still installs,
launches through the generated Python launcher and checks operator calls in Python. In a source
checkout: ``python setup.py build_ext --inplace`` puts the modules next to launcher.py."""

from setuptools import Extension, setup

setup(ext_modules=[Extension(f"threadtile.runtime.{name}", [f"src/threadtile/runtime/{name}.c"],
                             optional=True) for name in ("_fastlaunch", "_eagerop")])
