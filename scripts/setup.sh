#!/usr/bin/env bash
# Installs what bigstep needs, idempotently: Debian packages (compiler, Eigen, Catch2, yaml-cpp,
# nlohmann-json, LBFGSpp; headless OpenGL for bigstep render: EGL / Mesa, OSMesa) and Python packages (numpy, matplotlib, pytest, pin; nanobind for the
# Python module) for plots, tests and bindings; mujoco (libmujoco for MJCF / URDF import), gymnasium
# and example-robot-data (the test models).
set -euo pipefail
need=()
for p in build-essential cmake libeigen3-dev catch2 libyaml-cpp-dev nlohmann-json3-dev python3 python3-pip python3-dev \
         libegl1 libegl-mesa0 libgl1-mesa-dri libosmesa6; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
PY=${PYTHON:-python3}
if ! $PY -c "import numpy, matplotlib, pytest, pinocchio, nanobind" 2>/dev/null; then
  $PY -m pip install -q --disable-pip-version-check numpy matplotlib pytest pin nanobind 2>/dev/null ||
    $PY -m pip install -q --disable-pip-version-check --break-system-packages numpy matplotlib pytest pin nanobind
fi
if ! $PY -c "import mujoco, gymnasium, cmeel, imageio" 2>/dev/null || [ ! -d "$($PY -c 'import cmeel, os; print(os.path.dirname(os.path.dirname(cmeel.__file__)))' 2>/dev/null)/cmeel.prefix/share/example-robot-data" ]; then
  $PY -m pip install -q --disable-pip-version-check mujoco gymnasium imageio example-robot-data 2>/dev/null ||
    $PY -m pip install -q --disable-pip-version-check --break-system-packages mujoco gymnasium imageio example-robot-data
fi
