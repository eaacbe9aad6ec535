#!/usr/bin/env python3
"""Rewrites a gdn.recurrent function (memref form, as in examples/ and
bench/sweeps/) into its strided twin, the layouts real clients pass
(OperandLayouts.h):

- q, k, v: views of one packed projection per token, SGLang's mixed_qkv
  [N * T, 2 * H * K + HV * V] (token stride D = 2 H K + HV V);
- a, b, g, beta of one value a head: views of a packed [N * T, 2 * HV];
- the state pool (%pool, %h0, %ht, %state) and the per-token state buffer
  (%intermediate): each slot or row a view of a record `--pad` elements
  larger (another cache's bytes beside it, e.g. SGLang's conv state).

Usage: strided-variant.py IN.mlir [--pad 2048] > OUT.mlir
Only the types change: the twin computes what IN computes, so gdn-run
--check and --bench compare the two directly."""
import argparse
import re
import sys


def parse(type_text):
    m = re.fullmatch(r"memref<((?:\d+x)+)(\w+)>", type_text)
    if not m:
        return None
    return [int(d) for d in m.group(1).split("x")[:-1]], m.group(2)


def strided(shape, dtype, strides):
    dims = "".join(f"{d}x" for d in shape)
    return f"memref<{dims}{dtype}, strided<[{', '.join(map(str, strides))}]>>"


def dense_strides(shape):
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("--pad", type=int, default=2048,
                    help="elements beside each slot or row of a state buffer")
    args = ap.parse_args()
    text = open(args.input).read()
    types = dict(re.findall(r"%(\w+): (memref<[^>]*>)", text))
    q, v = parse(types["q"]), parse(types["v"])
    if q is None or v is None:
        sys.exit("strided-variant.py: %q and %v must be dense memrefs")
    (N, T, H, K), (HV, V) = q[0], v[0][2:]
    D = 2 * H * K + HV * V
    new = {}
    for name, t in types.items():
        p = parse(t)
        if p is None:
            continue
        shape, dtype = p
        if name in ("q", "k"):
            new[name] = strided(shape, dtype, [T * D, D, K, 1])
        elif name == "v":
            new[name] = strided(shape, dtype, [T * D, D, V, 1])
        elif name in ("a", "b", "g", "beta") and len(shape) == 3:
            new[name] = strided(shape, dtype, [T * 2 * HV, 2 * HV, 1])
        elif name in ("pool", "h0", "ht", "state", "intermediate"):
            strides = dense_strides(shape)
            strides[0] = strides[0] + args.pad
            new[name] = strided(shape, dtype, strides)
    for name, t in new.items():
        old = types[name]
        text = text.replace(f"%{name}: {old}", f"%{name}: {t}")
        text = text.replace(f"(%{name} : {old})", f"(%{name} : {t})")
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
