#!/bin/bash
# é: an accented line, then a launch whose columns count '😀' as two UTF-16 code units
python3 -m sglang.launch_server --model-path m --served-model-name '😀x' --tp_size 2 \
  --attention-backend flash_infer --tp 2 --mem-fraction-static 0.8 --mem-fraction-static 0.9
