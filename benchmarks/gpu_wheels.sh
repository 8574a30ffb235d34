#!/bin/bash
# The wheels benchmarks/gpu.py needs on the GPU machine beside its image's packages (Python
# 3.12 with numpy, scipy, scikit-learn, CuPy, PyTorch, OpenCV, pillow, click, tqdm, fsspec,
# threadpoolctl): PyAV, zarr and its codecs, array-api-compat, at the lock's versions, into
# .whl/ (git-ignored; about 40 MB). There, before the benchmark:
#
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
#   PYTHONPATH=/tmp/site:. python3 benchmarks/gpu.py
set -eu
cd "$(dirname "$0")/.."
pin() { grep -E "^$1==" constraints.txt | grep -v "python_full_version < '3.12'" | head -1 | cut -d' ' -f1; }
mkdir -p .whl
for name in av zarr numcodecs donfig google-crc32c array-api-compat; do
	python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
		--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
		--platform any -d .whl "$(pin "$name")"
done
ls -l .whl
