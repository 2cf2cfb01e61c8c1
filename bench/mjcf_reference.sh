#!/usr/bin/env bash
# Records MuJoCo's mass matrices, bias and passive forces for the MJCF
# importer's tests (tests/multibody/mjcf_test.cpp) with
# bench/mjcf_reference.cpp, built here against Debian's libmujoco-dev
# (2.2.2; needed by this script only):
#
#   bench/mjcf_reference.sh      # rewrites tests/multibody/data/mujoco_reference*.json
#
# Models: Debian's libmujoco-samples (humanoid, slider_crank, humanoid100),
# the project's MJCF twins of its URDF robots (problems/data/arm7.xml,
# humanoid.xml) and the importer's test models (tests/multibody/data/mjcf).
set -euo pipefail
cd "$(dirname "$0")/.."
SAMPLES=/usr/share/mujoco/model
BIN=$(mktemp -d)/mjcf_reference
g++ -O2 -std=c++20 -Wall -Wextra bench/mjcf_reference.cpp -lmujoco -o "$BIN"
OUT=tests/multibody/data
"$BIN" "$OUT/mujoco_reference.json" --states 5 --seed 7 \
  humanoid="$SAMPLES/humanoid/humanoid.xml:traj" \
  slider_crank="$SAMPLES/slider_crank/slider_crank.xml" \
  arm7=problems/data/arm7.xml:traj \
  humanoid_twin=problems/data/humanoid.xml \
  features=tests/multibody/data/mjcf/features.xml \
  features_radian=tests/multibody/data/mjcf/features_radian.xml \
  inertia=tests/multibody/data/mjcf/inertia.xml
# 627 velocities: the diagonal of M only, at two states.
"$BIN" "$OUT/mujoco_reference_humanoid100.json" --states 2 --seed 11 \
  humanoid100="$SAMPLES/humanoid100/humanoid100.xml:diag"
ls -l "$OUT"/mujoco_reference*.json
