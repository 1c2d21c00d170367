"""Build of the optional C launcher (threadtile.runtime._fastlaunch); the rest of the package is
described in pyproject.toml. ``optional=True``: without a C compiler the package still installs
and launches through the generated Python launcher. In a source checkout:
``python setup.py build_ext --inplace`` puts the module next to launcher.py."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("threadtile.runtime._fastlaunch",
                             ["src/threadtile/runtime/_fastlaunch.c"], optional=True)])
