"""scikit-learn: a per-pixel loop of small GaussianMixture fits (one tiny
fit per pixel of an image stack, the way remote-sensing and microscopy code
often runs it): mostly Python overhead in sklearn around small numpy calls."""
import sys

import numpy as np
from sklearn.mixture import GaussianMixture


def main(scale):
    rng = np.random.default_rng(1)
    pixels = max(1, int(40 * scale))
    series = rng.normal(size=(pixels, 64, 1)) + rng.integers(0, 2, size=(pixels, 64, 1)) * 3.0
    means = 0.0
    for p in range(pixels):
        gm = GaussianMixture(n_components=2, max_iter=20, random_state=0).fit(series[p])
        means += float(gm.means_.max())
    return means


if __name__ == "__main__":
    print(round(main(float(sys.argv[1])), 3))
