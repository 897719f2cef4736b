"""Fits the float32 erf/GELU coefficients of internal/vec/erf32.go.

erfcx(z) = erfc(z)·exp(z²) ≈ t·(c0 + c1·t + … + c9·t⁹), t = 1/(1 + 0.4·z),
over z in [0, 9.5], and erf(z)/z - 1 ≈ s0 + s1·z² + … + s4·z⁸ over
|z| < 1/2, each a minimax fit of relative error by Lawson's iteratively
reweighted least squares; the coefficients are rounded to float32 one at a
time, lowest first, and the higher ones refitted after each rounding.
Prints the coefficients and the maximum relative error with them rounded.

    /work/venv/bin/python bench/erf_fit.py
"""

import math

import numpy as np


def lawson(f0, g, V, fixed, iters=300):
    """Fits g - V[:, :len(fixed)]·fixed with the remaining columns, error relative to f0."""
    j = len(fixed)
    r = g - (V[:, :j] @ np.array(fixed) if j else 0)
    A, w = V[:, j:], np.ones_like(g)
    for _ in range(iters):
        W = w / f0
        c, *_ = np.linalg.lstsq(A * W[:, None], r * W, rcond=None)
        err = np.abs(A @ c - r) / f0
        w = w * np.sqrt(err / err.max()) + 1e-15
        w /= w.max()
    return c


def fit_rounded(f0, g, V):
    fixed = []
    for _ in range(V.shape[1]):
        fixed.append(float(np.float32(lawson(f0, g, V, fixed)[0])))
    c = np.array(fixed)
    return c, np.max(np.abs(V @ c - g) / f0)


def main():
    z = np.linspace(0, 9.5, 40001)
    t = 1 / (1 + 0.4 * z)
    erfcx = np.array([math.erfc(v) * math.exp(v * v) for v in z])
    c, err = fit_rounded(erfcx, erfcx, np.vander(t, 11, increasing=True)[:, 1:])
    print(f"erfcx: max relative error {err:.3g}")
    for i, v in enumerate(c):
        print(f"  c{i} = {v:.9e}")

    z = np.linspace(1e-6, 0.5, 20001)
    f = np.array([math.erf(v) / v for v in z])
    s, err = fit_rounded(f, f - 1, np.vander(z * z, 5, increasing=True))
    print(f"erf(z)/z: max relative error {err:.3g}")
    for i, v in enumerate(s):
        print(f"  s{i} = {v:.9e}")


if __name__ == "__main__":
    main()
