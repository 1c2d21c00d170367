"""Greedy generation with the threadtile decoder, random weights (nothing is downloaded).

    python examples/llama/run.py --layers 4 --batch 2 --prompt 16 --new 16   # GPU, 8B shapes
    python examples/llama/run.py --small --simulate                            # CPU simulator

Prints the generated token ids and the time taken; ``--check`` also runs the float32 torch
reference (examples/llama/reference.py) on the same tokens and prints the largest logit gap.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="the tests' tiny config")
    ap.add_argument("--simulate", action="store_true", help="the CPU simulator, CPU tensors")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--prompt", type=int, default=8)
    ap.add_argument("--new", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check", action="store_true", help="compare with the torch reference")
    o = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import torch  # noqa: PLC0415

    import threadtile  # noqa: PLC0415
    from llama.config import LLAMA3_8B, SMALL  # noqa: PLC0415
    from llama.layer import Model  # noqa: PLC0415

    cfg = SMALL if o.small else LLAMA3_8B
    device = "cpu" if o.simulate else "cuda"
    model = Model(cfg, layers=o.layers, seed=o.seed, device=device)
    prompt = torch.randint(0, cfg.vocab, (o.batch, o.prompt),
                           generator=torch.Generator().manual_seed(o.seed + 1)).to(device)
    with threadtile.simulate() if o.simulate else contextlib.nullcontext():
        t0 = time.perf_counter()
        new = model.generate(prompt, o.new)
        if device == "cuda":
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
    print(f"{o.batch} x {o.new} tokens in {dt:.3f} s ({o.batch * o.new / dt:.1f} tokens/s)")
    for row in new.tolist():
        print(row)
    if o.check:
        from llama.reference import RefModel  # noqa: PLC0415

        logits = RefModel(model).forward(torch.cat([prompt, new[:, :-1]], 1).cpu())
        logits = logits[:, o.prompt - 1:]
        chosen = logits.gather(-1, new.cpu()[..., None])[..., 0]
        gap = (logits.max(-1).values - chosen).max().item() / logits.abs().max().item()
        print(f"largest gap to the reference's argmax logit: {gap:.2e} of the logits' scale")


if __name__ == "__main__":
    main()
