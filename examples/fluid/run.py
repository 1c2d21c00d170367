"""A 2D incompressible fluid (Stam's "stable fluids") in threadtile's thread-level kernels.

    python examples/fluid/run.py --size 512 --steps 200 --out frames/     # on the GPU
    python examples/fluid/run.py --simulate --size 64 --steps 20 --out frames/

Writes the dye every ``--every`` steps as ``frames/dye_00000.png``..., the frames as
``frames/dye.gif``, and ``frames/residual.png``: the pressure residual per iteration of a
solve of the last step's divergence from zero, by Jacobi and by red-black SOR
(``--residual-iters`` iterations each). ``--simulate`` runs every launch
in threadtile's CPU simulator with its checks (races, bounds, barriers, uninitialised reads).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # examples/, where the fluid package is
    sys.path.insert(0, str(HERE.parent))

from fluid import images  # noqa: E402
from fluid.params import SOLVERS, Params  # noqa: E402
from fluid.solver import Fluid  # noqa: E402


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=256, help="grid cells a side (default 256)")
    ap.add_argument("--steps", type=int, default=200, help="time steps (default 200)")
    ap.add_argument("--out", type=Path, default=Path("frames"), help="folder for the pictures")
    ap.add_argument("--simulate", action="store_true", help="run in the CPU simulator")
    ap.add_argument("--solver", choices=SOLVERS, default="jacobi")
    ap.add_argument("--iters", type=int, default=None,
                    help="pressure iterations per step (default 40 for jacobi, 20 for sor)")
    ap.add_argument("--per-launch", type=int, default=4,
                    help="pressure iterations per relax launch (temporal blocking)")
    ap.add_argument("--dt", type=float, default=0.5)
    ap.add_argument("--every", type=int, default=None,
                    help="save the dye every N steps (default: about 50 frames)")
    ap.add_argument("--backend", choices=("auto", "torch", "device"), default="auto",
                    help="GPU arrays: torch tensors or threadtile device arrays")
    ap.add_argument("--no-images", action="store_true", help="write no pictures")
    ap.add_argument("--residual-iters", type=int, default=None,
                    help="iterations of the residual plot's solves (default: the larger of "
                         "3 x --iters and 4 x --size, where SOR's faster rate shows)")
    args = ap.parse_args(argv)
    if args.size < 4 or args.steps < 1:
        ap.error("--size must be at least 4 and --steps at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if not args.no_images:
        try:
            images.pillow()
        except RuntimeError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    iters = args.iters or (40 if args.solver == "jacobi" else 20)
    prm = Params(dt=args.dt, solver=args.solver, iters=iters, per_launch=args.per_launch)
    if not args.simulate:
        from threadtile.runtime.driver import gpu_available  # noqa: PLC0415

        if not gpu_available():
            print("error: no GPU here; pass --simulate to run in the CPU simulator "
                  "(with a small --size, such as 64)", file=sys.stderr)
            return 2
    fluid = Fluid(args.size, prm, backend="simulator" if args.simulate else args.backend)
    every = args.every or max(1, args.steps // 50)
    if not args.no_images:
        args.out.mkdir(parents=True, exist_ok=True)
    frames = []
    t0 = time.perf_counter()
    for s in range(1, args.steps + 1):
        fluid.step()
        if not args.no_images and (s % every == 0 or s == args.steps):
            frames.append(images.save_frame(fluid.field("d"), args.out / f"dye_{s:05d}.png"))
    fluid.field("d")  # waits for the last step
    took = time.perf_counter() - t0
    where = "simulator" if args.simulate else fluid.backend
    print(f"{args.steps} steps of {args.size}x{args.size} ({prm.solver}, {iters} iterations, "
          f"{where}): {took:.2f} s, {args.steps / took:.1f} steps/s (pictures included)")
    if not args.no_images:
        gif = images.save_gif(frames, args.out / "dye.gif")
        omega = prm.relaxation(fluid.shape, "sor")
        labels = {"jacobi": "Jacobi", "sor": f"red-black SOR, omega {omega:.3f}"}
        n_res = args.residual_iters or max(3 * iters, 4 * args.size)
        curves = {labels[name]: fluid.residual_history(n_res, name) for name in SOLVERS}
        plot = images.plot_residuals(curves, args.out / "residual.png",
                                     title=f"pressure residual (RMS) per iteration, "
                                           f"{args.size}x{args.size}, from p = 0")
        print(f"{len(frames)} frames in {args.out}/dye_*.png, {gif}, {plot}")
        for name, c in curves.items():
            print(f"  {name}: residual {c[0]:.3e} -> {c[-1]:.3e} after {len(c) - 1} iterations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
