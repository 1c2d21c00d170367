#!/bin/bash
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 -c "from threadtile.runtime import nvrtc; print(nvrtc.nvrtc_version())" 2>&1 | tail -1
