import sys, re
exec(open("probe/s34/ptxas_try.py").read().split('check("as is"')[0])
T = text
W1 = "qk = tt::tile::mma_wait<1>(qk, j == 0);"
W0 = "acc = tt::tile::mma_wait<0>(acc);\n    acc = tt::tile::mul(acc, _t11);"
a = T.replace(W0, "acc = tt::tile::mul(acc, _t11);").replace(W1, W1 + "\n    acc = tt::tile::mma_wait<0>(acc);")
check("acc wait right after", a)
# drop the K ahead copy (between)
b = re.sub(r"k_1 = tt::tile::load_operand_tma<tile_f16_128x64_smemtw, 0, 2, 3, true>[^;]*;", "", T)
check("no K copy", b)
# drop mask branch
c = re.sub(r"if \(j >= mask_start\) \{.*?qk = tt::tile::add\(qk, mask_1\);\s*\}", "", T, flags=re.S)
check("no mask", c)
