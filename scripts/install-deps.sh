#!/usr/bin/env bash
# Installs the build dependencies from Debian's apt (LLVM/MLIR 22, lit,
# FileCheck, GoogleTest, ninja; pkgconf for the installed package's C host
# test). Needs root (or sudo).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libzstd-dev \
  clang-22 lld-22 cmake ninja-build libgtest-dev xz-utils pkgconf >/dev/null
# Python side: the package's tests (numpy, pytest) and `pip install ./python`
# (scikit-build-core drives this project's CMake).
# On a distribution Python that refuses pip installs (PEP 668), use a venv.
PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q --disable-pip-version-check \
  numpy pytest scikit-build-core
