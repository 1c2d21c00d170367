import sys, re
sys.argv = sys.argv[:1] + ["128", "64", "128", "1"]
exec(open("probe/s34/sass.py").read().split("b = s.build")[0])
from threadtile.builds import target_for
from threadtile import blockfit
t = target_for(s, "sm_90a", tuple(k.options))
text = s.cuda.text
def check(name, src):
    log = blockfit.ptxas_log(src, "sm_90a", t.options, s.cuda.entry)[1]
    msg = [l for l in log.splitlines() if "C75" in l or "Used" in l or "spill" in l or "error" in l.lower()]
    print(name, "|", " / ".join(m.split("Potential Performance Loss:")[-1][:120] for m in msg))
check("as is", text)
check("PV sync", text.replace("acc = tt::tile::mma_async<", "acc = tt::tile::mma<"))
check("QK sync", text.replace("qk = tt::tile::mma_async<", "qk = tt::tile::mma<"))
check("no mask", re.sub(r"qk = tt::tile::add\(qk, mask_1\);", "", text))
