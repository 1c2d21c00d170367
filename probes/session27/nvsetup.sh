#!/bin/bash
# put NVRTC 13.5 (libs from the carried .whl/nvrtc135.txz) and CCCL 3.5 (.whl/nvidia_cuda_cccl) in place on the device
python3 -m pip install -q --no-deps --root-user-action=ignore .whl/nvidia_cuda_cccl-*.whl 2>&1 | grep -v WARN | tail -2
LIBDIR=$(python3 -c "
from cuda.pathfinder import load_nvidia_dynamic_lib as l; print(l('nvrtc').abs_path)" 2>/dev/null | xargs dirname)
echo "nvrtc was loaded from $LIBDIR"
mkdir -p /tmp/nv134 && tar xJf .whl/nvrtc135.txz -C /tmp/nv134
if [ -n "$LIBDIR" ] && [ -w "$LIBDIR" ]; then cp /tmp/nv134/nvidia/cu13/lib/* "$LIBDIR"/; fi
python3 -c "
from threadtile.runtime import nvrtc; print('nvrtc', nvrtc.nvrtc_version(), nvrtc.include_dirs())"
# pytest-xdist for parallel GPU tests (NVRTC compiles are CPU-bound)
python3 -m pip install -q --no-deps --root-user-action=ignore .whl/pytest_xdist-*.whl .whl/execnet-*.whl 2>&1 | grep -v WARN | tail -2
