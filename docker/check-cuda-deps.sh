#!/bin/sh
# Proves at image build time that onnxruntime-node's CUDA execution provider can load: runs ldd on
# every native library that ships in DIR (the providers, libonnxruntime, the Node binding) and
# fails when any dependency is "not found". A provider built for another CUDA major than the image
# (libcudart.so.13 on a CUDA 12 base, say) would otherwise pass the build and fail on the endpoint.
# It also checks that cuDNN's sub-libraries (loaded with dlopen, so invisible to ldd) are there, and
# prints the CUDA runtime, cuBLAS and cuDNN versions that the provider resolves to.
#
#   check-cuda-deps.sh DIR     e.g. node_modules/onnxruntime-node/bin/napi-v6/linux/x64
#
# CUDA_DEPS_ALLOW_MISSING: sonames that may be missing at build time because the host provides
# them at run time (default: libcuda.so.1, the NVIDIA driver, mounted by the container toolkit).
set -eu

dir=${1:?usage: check-cuda-deps.sh DIR}
allow=${CUDA_DEPS_ALLOW_MISSING-libcuda.so.1}

fail() {
  printf 'check-cuda-deps: %s\n' "$*" >&2
  exit 1
}

[ -d "$dir" ] || fail "$dir is not a directory"
[ -f "$dir/libonnxruntime_providers_cuda.so" ] ||
  fail "$dir has no libonnxruntime_providers_cuda.so: the CUDA provider was not installed"
command -v ldd >/dev/null 2>&1 || fail "ldd is not installed"

# The providers find each other (and libonnxruntime) in their own folder, as ORT loads them.
LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH

missing=''
resolved=''
checked=0
for lib in "$dir"/libonnxruntime_providers_*.so "$dir"/libonnxruntime.so* "$dir"/*.node; do
  [ -f "$lib" ] || continue
  checked=$((checked + 1))
  if ! out=$(ldd "$lib" 2>&1); then
    fail "ldd could not read ${lib##*/}: $out"
  fi
  # "libcudart.so.13 => not found" / "libcudart.so.13 => /usr/local/cuda/lib64/libcudart.so.13 (0x…)"
  for soname in $(printf '%s\n' "$out" | awk '$2 == "=>" && $3 == "not" {print $1}'); do
    case " $allow " in
      *" $soname "*) printf 'check-cuda-deps: %s needs %s, which the host provides at run time\n' "${lib##*/}" "$soname" ;;
      *) missing="$missing
  ${lib##*/} needs $soname: not found" ;;
    esac
  done
  resolved="$resolved
$(printf '%s\n' "$out" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')"
done

[ -z "$missing" ] || fail "missing libraries (the CUDA/cuDNN in this image do not match the provider):$missing"

# The version of a library is in the name of the file its soname link points at:
# libcudart.so.13 -> libcudart.so.13.0.96.
version_of() {
  path=$(printf '%s\n' "$resolved" | awk -v name="$1" '$1 ~ "^" name "\\.so" {print $2; exit}')
  [ -n "$path" ] || return 1
  real=$(readlink -f "$path")
  printf '%s (%s)\n' "$(printf '%s\n' "${real##*/}" | sed -n 's/^[^.]*\.so\.//p')" "$real"
}

for name in libcudart libcublas libcublasLt libcudnn; do
  if found=$(version_of "$name"); then
    printf 'check-cuda-deps: %s %s\n' "$name" "$found"
  fi
done

# cuDNN 9 loads its engines with dlopen from the folder of libcudnn.so.9: without them, the first
# convolution fails at run time although ldd is content.
cudnn=$(printf '%s\n' "$resolved" | awk '$1 ~ /^libcudnn\.so/ {print $2; exit}')
if [ -n "$cudnn" ]; then
  cudnn_dir=$(dirname "$(readlink -f "$cudnn")")
  major=$(printf '%s\n' "${cudnn##*/}" | sed -n 's/^libcudnn\.so\.\([0-9]*\).*/\1/p')
  for part in graph ops cnn engines_precompiled; do
    [ -e "$cudnn_dir/libcudnn_$part.so.$major" ] ||
      fail "cuDNN is incomplete: $cudnn_dir has no libcudnn_$part.so.$major (install the full cuDNN runtime)"
  done
fi

printf 'check-cuda-deps: ok: every dependency of %s libraries in %s resolves\n' "$checked" "$dir"
