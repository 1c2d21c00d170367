import sys, math, torch
sys.path.insert(0, "bench")
from attention import load_sample
from pathlib import Path
mod = load_sample(Path(sys.argv[1]), "threadtile")
for causal in (False, True):
    torch.manual_seed(0)
    b,h,s,d = 1,3,256,32
    q=torch.randn(b,h,s,d); k=torch.randn(b,h,s,d); v=torch.randn(b,h,s,d)
    import torch.nn.functional as F
    ref = F.scaled_dot_product_attention(q.double(),k.double(),v.double(),is_causal=causal)
    # host wrapper requires cuda: call kernel directly through ct.launch with cpu arrays
    ct = mod.ct
    out = torch.zeros(b,h,s,d)
    tm, tn = 64, 32
    import threadtile
    with threadtile.simulate():
      ct.launch(None, (s//tm, b*h, 1), mod.fmha_kernel, (q, k, v, out, 1/math.sqrt(d), 0, d, h, tm, tn, 1, causal, True))
    print(causal, (out.double()-ref).abs().max().item())
