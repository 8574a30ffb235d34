#!/bin/bash
# The sha256 of what kpca writes for one fixed set of commands on the bundled sample hand:
# every --help, three model files (Gaussian k = 8 and 3, polynomial), codes (.npy, text),
# decodes (default and distance solver, PNGs and the frames of an FFV1 .mkv), a denoise, a
# completion under a mask, sensors, a sweep, info, compare, a scikit-learn KernelPCA round trip,
# and KernelPCA's outputs over every route of its fit (benchmarks/sklearn_routes.py). A refactor
# that must change no output runs it before and after, from the same path (a model records
# where its frames came from), and compares:
#
#   bash benchmarks/identity.sh . /tmp/before > before.sha    (on the commit before)
#   bash benchmarks/identity.sh . /tmp/after > after.sha && diff before.sha after.sha
#
# Usage: identity.sh CHECKOUT OUTDIR (OUTDIR is emptied). Python: $PYTHON, else the checkout's
# .venv. The .mkv is in, and its decoded frames (kpca writes videos bitexact: no random UID).
set -u
src=$(cd "$1" && pwd)
out=$2
python=${PYTHON:-$src/.venv/bin/python}
rm -rf "$out" && mkdir -p "$out" && cd "$out" || exit 1
export PYTHONPATH=$src OPENBLAS_NUM_THREADS=1
K="$python -m kpcacli"
H=$src/sample_data/hand
{
	$K --help >help-main.txt
	for c in compare decode denoise encode eval extract fit info plot predict reconstruct sensors sweep; do
		$K $c --help >help-$c.txt
	done
	for c in $($K plot --help | sed -n '/Commands/,$p' | awk 'NR>1 {print $1}'); do $K plot $c --help >help-plot-$c.txt; done
	$K fit $H --frames ::2 -k 8 -q -m even.npz
	$K fit $H -k 3 -q -m all.npz
	$K fit $H --frames ::3 -k 4 --kernel poly -q -m poly.npz
	$K info -m even.npz >info-even.txt
	$K info -m all.npz --json >info-all.json
	$K encode $H/hand_001.png $H/hand_003.png $H/hand_035.png -m even.npz -o codes.npy
	$K encode $H/hand_001.png -m even.npz -o codes.txt
	$K decode codes.npy -m even.npz -o dec/
	$K decode codes.npy -m even.npz --solver distance -o dist/
	$K decode codes.npy -m even.npz -o dec.mkv
	$K denoise $H/hand_011.png -m even.npz -o den.png
	$K extract $H --frames 0:5 -o ext/
	$K sensors -m even.npz -n 20 -o sensors.npy
	$python -c "import numpy as np; from PIL import Image; m = np.full((180, 320), 255, np.uint8); m[40:120, 100:220] = 0; Image.fromarray(m).save('mask.png')"
	$K reconstruct $H/hand_011.png $H/hand_013.png -m even.npz --mask mask.png -o rec/ >rec.txt
	$K compare $H/hand_011.png den.png --json >compare.json
	$K sweep $H --frames ::4 -k 2 -k 4 --beta-range 1:100:3 -q >sweep.txt
	$K encode $H/hand_011.png -m poly.npz -o pcodes.npy
	$K decode pcodes.npy -m poly.npz -o pdec.png
	$python - <<'PY'
import av
import numpy as np
from sklearn.datasets import load_digits

from kpcacli import KernelPCA

X = load_digits().data[:300]
model = KernelPCA(n_components=5, kernel="rbf", gamma=1e-3, fit_inverse_transform=True).fit(X)
codes = model.transform(X[:50])
np.save("sk.npy", np.concatenate([codes.ravel(), model.inverse_transform(codes).ravel()]))
with av.open("dec.mkv") as container:
    np.save("mkv-frames.npy", np.stack([frame.to_ndarray() for frame in container.decode(video=0)]))
PY
	SCIPY_ARRAY_API=1 $python $src/benchmarks/sklearn_routes.py >sklearn-routes.txt
} >log.txt 2>&1
find . -type f ! -name log.txt | sort | xargs sha256sum | sed 's#  ./# #'
