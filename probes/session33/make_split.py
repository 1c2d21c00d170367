"""Writes probe/s33/AttentionFMHA_split.py from a checkout's samples/AttentionFMHA.py: the key
loop split at mask_start into an unmasked loop and a masked one (the sample's own body in
both). Nothing of the sample is kept here; run it against a checkout."""
import sys

src = open(sys.argv[1] if len(sys.argv) > 1 else "probe/cutile/samples/AttentionFMHA.py").read()
start = src.index("    # Loop over K, V blocks (N-dimension chunks)")
end = src.index("    # --- Final Normalization and Store ---")
body = src[start:end][src[start:end].index("    for j in range(0, Tc):"):]
m0 = body.index("        # --- Apply Causal Masking ---")
m1 = body.index("        # --- Online Softmax Update ---")
unmasked = (body[:m0] + body[m1:]).replace("for j in range(0, Tc):",
                                             "for j in range(0, min(mask_start, Tc)):")
masked = body.replace("for j in range(0, Tc):", "for j in range(max(mask_start, 0), Tc):").replace(
    "if (CAUSAL or not EVEN_K) and j >= mask_start:", "if CAUSAL or not EVEN_K:")
open("probe/s33/AttentionFMHA_split.py", "w").write(src[:start] + unmasked + masked + src[end:])
