#!/usr/bin/env python3
"""Fits the polynomial Tensor::tanh uses for 2^f - 1 = f Q(f) on |f| <= 1/2, Q of degree 5: least
squares in Q's relative error, reweighted toward the smallest largest error (Lawson). Prints Q's
coefficients, highest power first as Tensor::tanh lists them, and the largest relative error.

    /usr/bin/python3 scripts/fit-expm1.py

Needs numpy (python3-numpy: scripts/install-bench-deps.sh installs it). The last digits of the
coefficients vary with the LAPACK that solves it, which moves neither their float32 values nor the error.
"""
import numpy as np

DEGREE = 5
f = np.concatenate([np.linspace(-0.5, 0.5, 20001), 0.5 * np.cos(np.linspace(0, np.pi, 4001))])
f = f[np.abs(f) > 1e-9]  # Q(0) = ln 2 is reached as the limit
q = np.expm1(f * np.log(2)) / f
powers = np.stack([f**k for k in range(DEGREE + 1)], 1)
weights = np.ones_like(f)
for _ in range(60):
    scale = weights / q
    coefficients, *_ = np.linalg.lstsq(powers * scale[:, None], q * scale, rcond=None)
    error = (powers @ coefficients - q) / q
    weights = weights * np.sqrt(np.abs(error) + 1e-20)
    weights /= weights.max()
print("Q", ", ".join(repr(float(c)) for c in coefficients[::-1]))
print(f"largest relative error: {np.abs(error).max():.2e}")
