#!/bin/sh
# Entrypoint of the Kokoro TTS image.
#
#   docker run IMAGE serve      start the server (this is how SageMaker starts the container)
#   docker run IMAGE gpu-check  check that CUDA loads and measure it (scripts/gpu-check.ts)
#   docker run IMAGE CMD ...    run CMD instead (e.g. `bash`), with the same CUDA library setup
#
# For `serve` it picks the model directory, then replaces itself with Node (`exec`), so Node is
# PID 1 and receives SageMaker's SIGTERM directly; the server drains on it (SHUTDOWN_GRACE_S).
#
# Model directory, in this order:
#   1. KOKORO_MODEL_DIR (default /opt/ml/model, where SageMaker puts model data) holding nothing but
#      one *.tar.gz / *.tgz: extracted into a fresh directory under TMPDIR (the mount is read-only),
#      descending into a single top-level folder if the archive has one;
#   2. KOKORO_MODEL_DIR missing or empty, and weights baked into the image at KOKORO_BAKED_MODEL_DIR
#      (default /opt/kokoro-model, `docker build --build-arg BAKE_MODEL=1`): the baked weights;
#   3. otherwise KOKORO_MODEL_DIR as it is (the server says what is missing).
#
# The app (dist/, node_modules/) is the folder above this script's own (docker/), wherever it was
# installed; PROGRAM_DIR overrides that. Every other path is an environment variable too, so the
# tests can run this script outside an image: NODE_BIN, KOKORO_BAKED_MODEL_DIR, CUDA_COMPAT_DIR,
# NVIDIA_DRIVER_VERSION_FILE, TMPDIR.
set -eu

if [ -z "${PROGRAM_DIR:-}" ]; then
  script_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
  PROGRAM_DIR=$(dirname -- "$script_dir")
fi
NODE_BIN=${NODE_BIN:-node}
KOKORO_MODEL_DIR=${KOKORO_MODEL_DIR:-/opt/ml/model}
KOKORO_BAKED_MODEL_DIR=${KOKORO_BAKED_MODEL_DIR:-/opt/kokoro-model}
CUDA_COMPAT_DIR=${CUDA_COMPAT_DIR:-/usr/local/cuda/compat}
NVIDIA_DRIVER_VERSION_FILE=${NVIDIA_DRIVER_VERSION_FILE:-/proc/driver/nvidia/version}

log() {
  printf 'entrypoint: %s\n' "$*" >&2
}

# Prints the only entry of directory $1 (hidden ones count); fails when it has none or several.
only_entry() {
  found=''
  for entry in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    [ -e "$entry" ] || [ -L "$entry" ] || continue
    [ -z "$found" ] || return 1
    found=$entry
  done
  [ -n "$found" ] || return 1
  printf '%s\n' "$found"
}

# True when directory $1 is missing or has no entries at all.
is_empty() {
  [ -d "$1" ] || return 0
  for entry in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    if [ -e "$entry" ] || [ -L "$entry" ]; then return 1; fi
  done
  return 0
}

# True when version $1 is lower than version $2 (dotted numbers, e.g. 470.256.02 < 550.54.15).
version_lt() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    na = split(a, x, "."); nb = split(b, y, ".");
    n = na > nb ? na : nb;
    for (i = 1; i <= n; i++) {
      if ((x[i] + 0) < (y[i] + 0)) exit 0;
      if ((x[i] + 0) > (y[i] + 0)) exit 1;
    }
    exit 1
  }'
}

# CUDA forward compatibility, as SageMaker asks of containers that bring their own CUDA: the NVIDIA
# Container Toolkit no longer adds the image's compat libcuda by itself, so when the host driver is
# older than the image's CUDA, put the compat libraries first. No driver (CPU host, CPU image): no-op.
setup_cuda_compat() {
  compat_lib=$CUDA_COMPAT_DIR/libcuda.so.1
  [ -e "$compat_lib" ] || return 0
  [ -r "$NVIDIA_DRIVER_VERSION_FILE" ] || return 0
  # libcuda.so.1 -> libcuda.so.550.54.15: the newest driver this compat package stands in for.
  compat_version=$(readlink "$compat_lib" | sed -n 's/^.*libcuda\.so\.//p')
  # "NVRM version: NVIDIA UNIX [Open ]Kernel Module [for x86_64]  550.127.05  Release Build ...".
  driver_version=$(awk '/^NVRM version/ {
    for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+(\.[0-9]+)*$/) { print $i; exit }
  }' "$NVIDIA_DRIVER_VERSION_FILE")
  if [ -z "$compat_version" ] || [ -z "$driver_version" ]; then
    log "CUDA compat: could not read the versions (compat '$compat_version', driver '$driver_version'); leaving LD_LIBRARY_PATH alone"
    return 0
  fi
  if version_lt "$driver_version" "$compat_version"; then
    LD_LIBRARY_PATH=$CUDA_COMPAT_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
    log "CUDA compat: driver $driver_version is older than $compat_version; using $CUDA_COMPAT_DIR"
  fi
}

# Extracts archive $1 into a new directory and prints the model directory inside it.
extract_model() {
  target=$(mktemp -d "${TMPDIR:-/tmp}/kokoro-model.XXXXXX")
  log "extracting $1 into $target"
  tar -xzf "$1" -C "$target"
  inner=$(only_entry "$target") || inner=''
  # An archive of a folder (kokoro-82m/onnx/...) rather than of its contents: use that folder.
  # A lone onnx/ or voices/ is the model layout itself, not a wrapper.
  if [ -n "$inner" ] && [ -d "$inner" ]; then
    case ${inner##*/} in
      onnx | voices) ;;
      *) target=$inner ;;
    esac
  fi
  printf '%s\n' "$target"
}

resolve_model_dir() {
  if [ -d "$KOKORO_MODEL_DIR" ]; then
    entry=$(only_entry "$KOKORO_MODEL_DIR") || entry=''
    case $entry in
      *.tar.gz | *.tgz)
        if [ -f "$entry" ]; then
          KOKORO_MODEL_DIR=$(extract_model "$entry")
          return 0
        fi
        ;;
    esac
  fi
  if is_empty "$KOKORO_MODEL_DIR" && ! is_empty "$KOKORO_BAKED_MODEL_DIR"; then
    log "no model in $KOKORO_MODEL_DIR; using the weights baked into the image at $KOKORO_BAKED_MODEL_DIR"
    KOKORO_MODEL_DIR=$KOKORO_BAKED_MODEL_DIR
  fi
}

setup_cuda_compat

if [ $# -eq 0 ] || [ "$1" = serve ]; then
  [ $# -eq 0 ] || shift
  resolve_model_dir
  export KOKORO_MODEL_DIR
  log "serving the model in $KOKORO_MODEL_DIR"
  exec "$NODE_BIN" "$PROGRAM_DIR/dist/server/main.js" "$@"
fi

if [ "$1" = gpu-check ]; then
  shift
  resolve_model_dir
  export KOKORO_MODEL_DIR
  exec "$NODE_BIN" "$PROGRAM_DIR/dist/scripts/gpu-check.js" "$@"
fi

exec "$@"
