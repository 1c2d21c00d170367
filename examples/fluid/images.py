"""Pictures of the fluid with Pillow (an optional extra: ``pip install 'threadtile[images]'``):
the dye as PNG frames and an animated GIF, the pressure solve's residual as a PNG plot."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

# a dark-blue -> purple -> orange -> pale-yellow ramp, as (position, r, g, b)
_RAMP = np.array([(0.00, 5, 5, 20), (0.25, 60, 15, 110), (0.50, 170, 40, 110),
                  (0.75, 245, 125, 40), (1.00, 252, 250, 190)], np.float64)

MISSING = ("pictures need Pillow, which is not installed: pip install 'threadtile[images]' "
           "(or pip install pillow), or run with --no-images")


def pillow():
    """PIL.Image and PIL.ImageDraw, or a RuntimeError that says how to install Pillow."""
    try:
        from PIL import Image, ImageDraw  # noqa: PLC0415
    except ImportError:
        raise RuntimeError(MISSING) from None
    return Image, ImageDraw


def colour(dye: np.ndarray) -> np.ndarray:
    """An ``(H, W, 3)`` uint8 picture of ``dye`` (values in ``[0, 1]``, clipped), row 0 at the
    bottom (``y`` points up in the simulation, down in an image)."""
    t = np.clip(np.asarray(dye, np.float64), 0.0, 1.0)[::-1]
    rgb = [np.interp(t, _RAMP[:, 0], _RAMP[:, k]) for k in (1, 2, 3)]
    return np.stack(rgb, axis=-1).round().astype(np.uint8)


def save_frame(dye: np.ndarray, path: str | Path) -> Path:
    """``dye`` as a PNG at ``path``."""
    image, _ = pillow()
    path = Path(path)
    image.fromarray(colour(dye)).save(path, format="PNG")
    return path


def save_gif(frames: Sequence[str | Path], path: str | Path, ms_per_frame: int = 60,
             size: int = 512) -> Path:
    """The PNG ``frames`` as an animated GIF at ``path`` (scaled down to at most ``size``
    pixels a side: a GIF of 2048x2048 frames is too large to look at)."""
    image, _ = pillow()
    if not frames:
        raise ValueError("save_gif: no frames")
    pics = []
    for f in frames:
        with image.open(f) as im:
            im = im.convert("RGB")
            if max(im.size) > size:
                scale = size / max(im.size)
                im = im.resize((max(1, round(im.size[0] * scale)),
                                max(1, round(im.size[1] * scale))), image.Resampling.BILINEAR)
            pics.append(im.quantize(colors=255))
    path = Path(path)
    pics[0].save(path, format="GIF", save_all=True, append_images=pics[1:],
                 duration=ms_per_frame, loop=0)
    return path


def plot_residuals(curves: dict[str, Sequence[float]], path: str | Path,
                   title: str = "pressure residual (RMS) per iteration",
                   size: tuple[int, int] = (720, 440)) -> Path:
    """Line plot of each curve (a name and its values, one per iteration from 0) on a log
    scale, as a PNG at ``path``."""
    image, draw_mod = pillow()
    colours = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189)]
    w, h = size
    left, right, top, bottom = 70, 20, 40, 50
    im = image.new("RGB", size, "white")
    dr = draw_mod.Draw(im)
    values = [v for c in curves.values() for v in c if v > 0 and math.isfinite(v)]
    if not values:
        raise ValueError("plot_residuals: no positive finite values to plot")
    lo = math.floor(math.log10(min(values)))
    hi = math.ceil(math.log10(max(values)))
    hi = hi if hi > lo else lo + 1
    n = max(len(c) for c in curves.values())
    xmax = max(n - 1, 1)

    def xy(i: int, value: float) -> tuple[float, float]:
        fx = left + (w - left - right) * i / xmax
        ly = math.log10(max(value, 10.0 ** lo))
        fy = top + (h - top - bottom) * (hi - ly) / (hi - lo)
        return fx, fy

    dr.rectangle([left, top, w - right, h - bottom], outline="black")
    for e in range(lo, hi + 1):  # decades
        _, y = xy(0, 10.0 ** e)
        dr.line([left, y, w - right, y], fill=(220, 220, 220))
        dr.text((8, y - 6), f"1e{e}", fill="black")
    for k in range(6):  # iteration ticks
        i = round(xmax * k / 5)
        x, _ = xy(i, 10.0 ** lo)
        dr.line([x, h - bottom, x, h - bottom + 5], fill="black")
        dr.text((x - 8, h - bottom + 8), str(i), fill="black")
    dr.text((w // 2 - 30, h - 20), "iteration", fill="black")
    dr.text((left, 12), title, fill="black")
    for k, (name, curve) in enumerate(curves.items()):
        c = colours[k % len(colours)]
        pts = [xy(i, v) for i, v in enumerate(curve) if v > 0 and math.isfinite(v)]
        if len(pts) > 1:
            dr.line(pts, fill=c, width=2)
        ly = top + 10 + 16 * k
        lx = w - right - 45 - max(dr.textlength(str(n)) for n in curves)
        dr.line([lx, ly + 6, lx + 25, ly + 6], fill=c, width=3)
        dr.text((lx + 32, ly), name, fill="black")
    path = Path(path)
    im.save(path, format="PNG")
    return path
