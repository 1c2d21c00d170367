"""decode attention (batch 32, 4097 positions): splits x decode_tn, kernel pair timed."""
import math, sys
sys.path.insert(0, "bench")
import torch
from _common import cuda_time_ms
import os
if os.environ.get("TTSRC"): sys.path.insert(0, os.environ["TTSRC"])
from llama import kernels as K
from threadtile.tile import cdiv
tag = sys.argv[1]
import threadtile; print(tag, threadtile.__file__)
b, h, kvh, d, G = 32, 32, 8, 128, 4
ctx = 4097
q = torch.randn(b, h, d, device="cuda").to(torch.bfloat16)
kc, vc = (torch.randn(b, ctx, kvh, d, device="cuda").to(torch.bfloat16) for _ in range(2))
lens = torch.full((b,), ctx, dtype=torch.int32, device="cuda")
from torch.nn.functional import scaled_dot_product_attention as sdpa
ref = sdpa(q[:, :, None], kc.transpose(1, 2), vc.transpose(1, 2), enable_gqa=True)[:, :, 0].float()
nbytes = 2 * b * ctx * kvh * d * 2
for tn in (32, 64):
    for splits in (2, 4, 8):
        chunk = cdiv(cdiv(ctx, splits), tn) * tn
        sp = cdiv(ctx, chunk)
        opart = torch.empty(b, kvh, sp, G, d, dtype=torch.float32, device="cuda")
        lse = torch.empty(b, kvh, sp, G, dtype=torch.float32, device="cuda")
        o = torch.empty(b, h, d, dtype=torch.bfloat16, device="cuda")
        p2 = 1 << (sp - 1).bit_length()
        def f():
            K.attention_decode[(sp, kvh, b)](q, kc, vc, lens, opart, lse, 1 / math.sqrt(d), G, d, tn, chunk)
            K.attention_combine[(kvh, b)](opart, lse, o, G, d, p2)
        f()
        if tn == 64 and splits == 2:
            import numpy as np
            src = K.attention_decode.cuda_source(q, kc, vc, lens, opart, lse, 1 / math.sqrt(d), G, d, tn, chunk)
            print(tag, "prefetches in source:", src.count("prefetch_operand<"))
        err = ((o.float() - ref).abs().max() / ref.abs().max()).item()
        t = min(cuda_time_ms(f) for _ in range(2))
        print(f"{tag} tn {tn} splits {sp} chunk {chunk}: {nbytes/t/1e6:.0f} GB/s ({nbytes/t/1e6/4800:.3f}) err {err:.4f}", flush=True)
