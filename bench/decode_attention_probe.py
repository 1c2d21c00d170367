"""Probe (print-only, GPU): the Llama example's flash-decoding kernel (batch 32, a 4096-token
cache, Llama-3-8B's heads) by (chunk, TN), GB/s of the cache and the difference from SDPA;
``one`` launches it three times for ncu (``ncu -k regex:attention_decode --launch-skip 1
--launch-count 1 python bench/decode_attention_probe.py one``). What docs/performance.md's
decode attention figures by configuration came from (H200, sessions 17-18).
"""

from __future__ import annotations

import dataclasses
import sys

import torch
from _common import cuda_time_ms
from llama.config import Config
from llama.layer import DecoderLayer

CONFIGS = [(512, 64), (256, 64), (1024, 64), (512, 32), (512, 128), (256, 32), (2048, 128)]


def main() -> None:
    cfg0 = Config()
    b, ctx = 32, 4096
    h, kvh, d = cfg0.heads, cfg0.kv_heads, cfg0.head_dim
    qd = torch.randn(b, h, d, device="cuda").to(torch.bfloat16)
    kc, vc = (torch.randn(b, ctx, kvh, d, device="cuda").to(torch.bfloat16) for _ in range(2))
    lens = torch.full((b,), ctx, dtype=torch.int32, device="cuda")
    if sys.argv[1:] == ["one"]:
        layer = DecoderLayer(cfg0, None)
        for _ in range(3):
            layer.attention_decode(qd, kc, vc, lens, ctx)
        torch.cuda.synchronize()
        return
    nbytes = 2 * b * ctx * kvh * d * 2
    ref = torch.nn.functional.scaled_dot_product_attention(
        qd[:, :, None], kc.transpose(1, 2), vc.transpose(1, 2), enable_gqa=True)[:, :, 0].float()
    for chunk, tn in CONFIGS:
        layer = DecoderLayer(dataclasses.replace(cfg0, decode_chunk=chunk, decode_tn=tn), None)
        o = layer.attention_decode(qd, kc, vc, lens, ctx).float()
        err = ((o - ref).abs().max() / ref.abs().max()).item()
        t = cuda_time_ms(lambda layer=layer: layer.attention_decode(qd, kc, vc, lens, ctx))
        print(f"chunk {chunk:5d} tn {tn:4d}: {t * 1e3:8.1f} us {nbytes / t / 1e6:7.0f} GB/s  "
              f"diff {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
