import sys, re
exec(open("probe/s34/ptxas_try.py").read().split('check("as is"')[0])
T = text
W0 = "acc = tt::tile::mma_wait<0>(acc);\n"
base = T.replace("    " + W0, "")
for anchor in ["tile_f32_128x1_mmarow m_ij = tt::tile::maximum(m_i, _t6);", "qk = tt::tile::sub(_t7, _t8);",
               "tile_f32_128x64_mma p = tt::tile::exp2_ftz(qk);", "tile_f32_128x1_mmarow l_ij = tt::tile::reduce_mma_rows<tt::tile::SUM>(p);",
               "tile_f32_128x1_mmarow alpha = tt::tile::exp2_ftz(_t9);", "l_i = tt::tile::add(_t10, l_ij);",
               "tile_f32_128x128_mma _t11 = tt::tile::broadcast_frag<tile_f32_128x128_mma>(alpha);"]:
    assert anchor in base, anchor
    check("wait after " + anchor[:50], base.replace(anchor, anchor + "\n    " + W0))
