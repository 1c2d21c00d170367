import dataclasses, sys, torch
from llama.config import Config
from llama.layer import DecoderLayer
cfg = Config() if len(sys.argv) < 2 else dataclasses.replace(Config(), decode_chunk=int(sys.argv[1]))
qd = torch.randn(32, 32, 128, device="cuda").to(torch.bfloat16)
kc, vc = (torch.randn(32, 4096, 8, 128, device="cuda").to(torch.bfloat16) for _ in range(2))
lens = torch.full((32,), 4096, dtype=torch.int32, device="cuda")
layer = DecoderLayer(cfg, None)
for _ in range(2):
    layer.attention_decode(qd, kc, vc, lens, 4096)
torch.cuda.synchronize()
