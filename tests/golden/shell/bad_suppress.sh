#!/bin/bash
# servelint: disable-file=SL008 -- the deprecated flags stay until the 0.6 image
# Suppression comments: each applies to the launch right below it.

# servelint: disable=SL002 -- the old wrapper still passes --tp_size
# Prefill server.
# servelint: disable=SL004 -- short flags on purpose
python3 -m sglang.launch_server --model-path m --tp_size 2 --tp 2 \
  --port 30000

# Not suppressed: the comment above belongs to the launch before.
python3 -m sglang.launch_server --model-path m --tp_size 2

# servelint: disable=SL004,SL010 -- SL010 is stale
python3 -m sglang.launch_server --model-path m --tp 2

# servelint: disable=SL02 -- a typo
python3 -m sglang.launch_server --model-path m --mem_fraction_static 0.8

python3 -m sglang.launch_server --model-path m \
# servelint: disable=SL002 -- too late: after a backslash
python3 -m sglang.launch_server --model-path m --disable_radix_cache
