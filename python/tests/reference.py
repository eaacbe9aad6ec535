"""fp64 numpy reference of the gated delta rule (docs/math.md §1), for tests."""
import numpy as np


def softplus(x):
    return np.where(x <= 20.0, np.log1p(np.exp(np.minimum(x, 20.0))), x)


def sigmoid(x):
    """1 / (1 + exp(-x)); exp overflows to inf for x < -709, giving 0 (no warning)."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


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
                    bt = sigmoid(np.asarray(b[n, t, hv], np.float64))
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


def verify_tree(q, k, v, parents, g=None, a=None, A_log=None, dt_bias=None, beta=None, b=None,
                initial_state=None, scale=None, qk_l2norm=False, layout="kv", has_row=None,
                round_state=None):
    """EAGLE tree verify (gdn.recurrent with retrieve_parent_token), fp64.
    parents [N, T]: step s > 0 of row n with p = parents[n, s] starts from the
    carried state when p == s - 1, from the stored state after step p (passed
    through round_state, the buffer's rounding, e.g. to bf16) when
    0 <= p < s - 1, and from the initial state otherwise (p < 0 or p >= s: a
    root). Rows with has_row[n] False (no buffer row) ignore their table.
    Shapes as recurrent(). Returns (o [N, T, HV, V], states [N, T, HV, ...] the
    state after every token in `layout`, unrounded, final state)."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    N, T, H, K = q.shape
    HV, V = v.shape[2:]
    parents = np.asarray(parents)
    round_state = round_state or (lambda x: x)
    S0 = np.zeros((N, HV, K, V))
    if initial_state is not None:
        s0 = np.asarray(initial_state, np.float64)
        S0 = s0.transpose(0, 1, 3, 2).copy() if layout == "vk" else s0.copy()
    o = np.zeros((N, T, HV, V))
    states = np.zeros((N, T, HV, K, V))
    S = S0.copy()
    one = lambda name, x, n, t: None if x is None else x[n:n + 1, t:t + 1]
    for n in range(N):
        for t in range(T):
            p = int(parents[n, t])
            if t > 0 and (has_row is None or has_row[n]) and p != t - 1:
                S[n] = round_state(states[n, p]) if 0 <= p < t else S0[n]
            on, s_after = recurrent(
                q[n:n + 1, t:t + 1], k[n:n + 1, t:t + 1], v[n:n + 1, t:t + 1],
                g=one("g", g, n, t), a=one("a", a, n, t), A_log=A_log, dt_bias=dt_bias,
                beta=one("beta", beta, n, t), b=one("b", b, n, t), initial_state=S[n:n + 1],
                scale=scale, qk_l2norm=qk_l2norm, layout="kv")
            o[n, t], S[n], states[n, t] = on[0, 0], s_after[0], s_after[0]
    flip = (lambda x: np.swapaxes(x, -1, -2)) if layout == "vk" else (lambda x: x)
    return o, flip(states), flip(S)
