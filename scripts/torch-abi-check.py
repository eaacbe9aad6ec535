#!/usr/bin/env python3
"""Which versions of a torch extension link against a given torch.

An ahead-of-time torch extension (sgl_kernel's ops library, for one) names
the C++ symbols of the torch it was built with; where the torch it is loaded
into lacks one, the import fails with "undefined symbol". The GPU machine's
image has its own torch (2.11), so scripts/anchor-site.sh pins the newest
sglang-kernel whose sm_90 ops this check passes for that torch.

  python3 scripts/torch-abi-check.py --torch torch-2.11.0-...whl \\
      --member 'sgl_kernel/sm90/common_ops*.so' sglang_kernel-0.4.*.whl

For each extension wheel (or .so) it prints the number of torch symbols
(namespaces at, c10, torch) the library needs and those the torch wheel's
torch/lib/*.so do not define, demangled. Exit status 1 if any wheel misses
one. Needs binutils' nm and c++filt.
"""
import argparse
import fnmatch
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

TORCH_PREFIXES = ("_ZN2at", "_ZN3c10", "_ZN5torch", "_ZNK2at", "_ZNK3c10", "_ZNK5torch")


def nm(path: Path, *flags: str) -> set:
    out = subprocess.run(["nm", "-D", *flags, str(path)], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def members(archive: Path, pattern: str, into: Path) -> list:
    """The archive's members matching `pattern`, extracted under `into`."""
    if archive.suffix != ".whl":
        return [archive]
    with zipfile.ZipFile(archive) as z:
        names = [n for n in z.namelist() if fnmatch.fnmatch(n, pattern)]
        return [Path(z.extract(n, into)) for n in names]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--torch", required=True, type=Path, help="a torch wheel")
    ap.add_argument("--member", default="*.so",
                    help="the libraries to check inside each extension wheel (fnmatch)")
    ap.add_argument("extensions", nargs="+", type=Path, help="extension wheels or .so files")
    args = ap.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        defined = set()
        for lib in members(args.torch, "torch/lib/*.so*", tmp / "torch"):
            defined |= nm(lib, "--defined-only")
        for ext in args.extensions:
            libs = members(ext, args.member, tmp / ext.name)
            if not libs:
                print(f"{ext.name}: no member matches {args.member}")
                failed = True
                continue
            for lib in libs:
                needed = {s for s in nm(lib, "--undefined-only") if s.startswith(TORCH_PREFIXES)}
                missing = sorted(needed - defined)
                print(f"{ext.name} {lib.name}: {len(needed)} torch symbols, "
                      f"{len(missing)} missing")
                if missing:
                    failed = True
                    names = subprocess.run(["c++filt"], input="\n".join(missing), check=True,
                                           capture_output=True, text=True).stdout
                    for n in names.splitlines():
                        print(f"  missing: {n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
