import sys, re, os
tm, tn, D = sys.argv[1:4]
sys.argv = sys.argv[:1] + [tm, tn, D, "1"]
exec(open("probe/s34/ptxas_try.py").read().split('check("as is"')[0])
T = text
for nb in (1, 2):
    check(f"{os.environ.get('THREADTILE_OVERLAP','1')} {tm}x{tn} D{D} blocks {nb}", re.sub(r"__launch_bounds__\((\d+), 1\)", rf"__launch_bounds__(\1, {nb})", T))
