"""threadtile: GPU kernels for Python programmers, from threads to tiles (provisional)."""
__version__ = "0.1.0"
from .frontend.specialize import Constant
from .jit import jit
from .lang.thread import *  # noqa: F401,F403
from .lang.types import *  # noqa: F401,F403
