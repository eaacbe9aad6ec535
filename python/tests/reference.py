"""fp64 numpy reference of the gated delta rule (REFERENCE.md §1), for tests."""
import numpy as np


def softplus(x):
    return np.where(x <= 20.0, np.log1p(np.exp(np.minimum(x, 20.0))), x)


def recurrent(q, k, v, g=None, a=None, A_log=None, dt_bias=None, beta=None, b=None,
              initial_state=None, scale=None, qk_l2norm=False, layout="kv",
              allow_neg_eigval=False):
    """q, k [N, T, H, K]; v [N, T, HV, V]; gates [N, T, HV]; state [N, HV, K, V]
    (kv) or [N, HV, V, K] (vk). Returns (o [N, T, HV, V], final state) in fp64.
    KDA: g or a [N, T, HV, K] decay each key row of S (S[k, :] *= exp(g[k])),
    dt_bias then [HV * K]; beta or b [N, T, HV, V] scale each value column of
    the delta."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    N, T, H, K = q.shape
    HV, V = v.shape[2:]
    scale = K ** -0.5 if not scale else scale
    S = np.zeros((N, HV, K, V))
    if initial_state is not None:
        s0 = np.asarray(initial_state, np.float64)
        S = s0.transpose(0, 1, 3, 2).copy() if layout == "vk" else s0.copy()
    o = np.zeros((N, T, HV, V))
    for n in range(N):
        for hv in range(HV):
            h = hv // (HV // H)
            for t in range(T):
                qq, kk = q[n, t, h].copy(), k[n, t, h].copy()
                if qk_l2norm:
                    qq /= np.sqrt((qq * qq).sum() + 1e-6)
                    kk /= np.sqrt((kk * kk).sum() + 1e-6)
                qq *= scale
                # decay: a scalar, or a column [K, 1] scaling each key row
                if g is not None:
                    gt = np.asarray(g[n, t, hv], np.float64)
                    S[n, hv] *= np.exp(gt).reshape(-1, 1) if gt.ndim else np.exp(gt)
                elif a is not None:
                    at = np.asarray(a[n, t, hv], np.float64)
                    bias = (np.asarray(dt_bias, np.float64).reshape(HV, K)[hv] if at.ndim
                            else np.float64(dt_bias[hv]))
                    sp = softplus(at + bias)
                    d = np.exp(-np.exp(np.float64(A_log[hv])) * sp)
                    S[n, hv] *= d.reshape(-1, 1) if at.ndim else d
                bt = 1.0  # a scalar, or a row [V] (per value channel)
                if beta is not None:
                    bt = np.asarray(beta[n, t, hv], np.float64)
                elif b is not None:
                    bt = 1.0 / (1.0 + np.exp(-np.asarray(b[n, t, hv], np.float64)))
                    if allow_neg_eigval:
                        bt = 2.0 * bt
                u = bt * (v[n, t, hv] - S[n, hv].T @ kk)
                S[n, hv] += np.outer(kk, u)
                o[n, t, hv] = S[n, hv].T @ qq
    final = S.transpose(0, 1, 3, 2) if layout == "vk" else S
    return o, final


def rms_rel(x, ref):
    x, ref = np.asarray(x, np.float64), np.asarray(ref, np.float64)
    return float(np.linalg.norm(x - ref) / max(np.linalg.norm(ref), 1e-300))
