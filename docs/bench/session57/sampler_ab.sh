#!/usr/bin/env bash
# The sampler alone, two trees alternated, each with the CPU backend's passes over whole rows
# (`--kernels`, as the engine runs them): session 56's script with that flag.
#   bash docs/bench/session57/sampler_ab.sh 4e5d8dc HEAD
set -euo pipefail
exec bash "$(dirname "$0")/../session56/sampler_ab.sh" "$1" "$2" --kernels
