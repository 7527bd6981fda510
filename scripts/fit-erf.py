#!/usr/bin/env python3
"""Fits the rational approximation Tensor::erf uses: erf(x) ~= x P(x^2) / Q(x^2) on |x| <= 3.925
(beyond it float32's erf rounds to +-1), P and Q of degree 5, Q(0) = 1. Linearized least squares
(f Q - x P = 0, weighted by 1/Q), reweighted toward the smallest largest error (Lawson). Prints
the coefficients and the largest absolute error in float64 and evaluated in float32 (without
FMA, against erf at each float32 point; an FMA CPU rounds differently, within the same bound: the
test ElementwiseUnary.ErfEdgeValues sweeps both).

    /usr/bin/python3 scripts/fit-erf.py

Needs numpy (python3-numpy: scripts/install-bench-deps.sh installs it). The problem is
ill-conditioned: the last digits of the coefficients vary with the LAPACK that solves it, which
moves neither their float32 values nor the float64 error.
"""
from math import erf

import numpy as np

X, DEGREE_P, DEGREE_Q = 3.925, 5, 5
xs = np.unique(np.concatenate([np.linspace(0, X, 20001), X * np.cos(np.linspace(0, np.pi / 2, 4001))]))
f = np.array([erf(v) for v in xs])
t = xs * xs
weights, q_values = np.ones_like(xs), np.ones_like(xs)
for _ in range(60):
    a = np.concatenate([np.stack([xs * t**k for k in range(DEGREE_P + 1)], 1),
                        np.stack([-f * t**k for k in range(1, DEGREE_Q + 1)], 1)], 1)
    scale = weights / np.abs(q_values)
    solution, *_ = np.linalg.lstsq(a * scale[:, None], f * scale, rcond=None)
    p, q = solution[:DEGREE_P + 1], np.concatenate([[1.0], solution[DEGREE_P + 1:]])
    q_values = np.polyval(q[::-1], t)
    error = xs * np.polyval(p[::-1], t) / q_values - f
    weights = weights * np.sqrt(np.abs(error) + 1e-18)
    weights /= weights.max()


def in_float32(coefficients, v):
    out = np.zeros_like(v)
    for c in coefficients[::-1].astype(np.float32):
        out = (out * v + c).astype(np.float32)
    return out


x32 = xs.astype(np.float32)
y32 = np.clip(x32 * in_float32(p, x32 * x32) / in_float32(q, x32 * x32), -1, 1).astype(np.float32)
f32 = np.array([erf(float(v)) for v in x32])  # erf at the float32 points themselves
print("P", ", ".join(repr(float(c)) for c in p))
print("Q", ", ".join(repr(float(c)) for c in q))
print(f"largest absolute error: {np.abs(error).max():.2e} (float64), {np.abs(y32 - f32).max():.2e} (float32)")
