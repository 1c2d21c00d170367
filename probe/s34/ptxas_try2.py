import sys, re
sys.argv = sys.argv[:1] + ["128", "64", "128", "1"]
exec(open("probe/s34/ptxas_try.py").read().split('check("as is"')[0])
T = text
check("as is", T)
check("wait0", T.replace("qk = tt::tile::mma_wait<1>(qk, j == 0);", "qk = tt::tile::mma_wait<0>(qk);"))
check("wait1 nofirst", T.replace("qk = tt::tile::mma_wait<1>(qk, j == 0);", "qk = tt::tile::mma_wait<1>(qk);"))
U = re.sub(r"if \(j > 0\) \{\s*(acc = tt::tile::mma_async<true, 1>\(p_1, v_prev, acc\);)\s*\}", r"\1", T)
check("uncond PV", U)
check("uncond PV nofirst", U.replace("qk = tt::tile::mma_wait<1>(qk, j == 0);", "qk = tt::tile::mma_wait<1>(qk);"))
