#!/bin/bash
# The wheels benchmarks/gpu.py needs on the GPU machine beside its image's packages (Python
# 3.12 with numpy, scipy, scikit-learn, CuPy, PyTorch, OpenCV, pillow, click, tqdm, fsspec,
# threadpoolctl): PyAV, zarr with its codecs and PyYAML, array-api-compat, and what the device
# tests need (pytest, hypothesis, array-api-strict), at the lock's versions, into .whl/
# (git-ignored; about 40 MB). There, the benchmark, then the device tests on CuPy and on
# PyTorch's GPU (tests/helpers.py: accelerators), beside array-api-strict:
#
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
#   PYTHONPATH=/tmp/site:. python3 benchmarks/gpu.py
#   PYTHONPATH=/tmp/site:. python3 -m pytest -q -p no:cacheprovider tests/test_device.py tests/test_array_api.py
set -eu
cd "$(dirname "$0")/.."
pin() { grep -E "^$1==" constraints.txt | grep -v "python_full_version < '3.12'" | head -1 | cut -d' ' -f1; }
mkdir -p .whl
for name in av zarr numcodecs donfig pyyaml google-crc32c array-api-compat \
	pytest pluggy iniconfig pygments hypothesis sortedcontainers array-api-strict; do
	python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
		--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
		--platform any -d .whl "$(pin "$name")"
done
ls -l .whl
