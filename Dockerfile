# syntax=docker/dockerfile:1
#
# Kokoro-82M streaming TTS server as an Amazon SageMaker real-time endpoint image.
#
#   docker build --target gpu -t kokoro-tts:gpu .    # CUDA 12 + cuDNN 9 (ml.g5: NVIDIA A10G)
#   docker build --target cpu -t kokoro-tts:cpu .
#
# Weights are not in the image: SageMaker mounts them at /opt/ml/model (or run with
# -v "$PWD/models/kokoro-82m:/opt/ml/model:ro"). `--build-arg BAKE_MODEL=1` (and optionally
# `--build-arg KOKORO_DTYPE=fp16`) downloads them at build time into /opt/kokoro-model instead, which
# the entrypoint uses whenever /opt/ml/model is missing or empty (SageMaker's mount would hide
# anything baked at /opt/ml/model itself).

# One Node for everything: the build stages, the cpu image, and the binary copied into the gpu image,
# so the native addons are built against and run on the same Node. Pin a digest
# (node:22-bookworm-slim@sha256:...) for reproducible builds.
ARG NODE_IMAGE=node:22-bookworm-slim
# CUDA 12.4 matches SageMaker's al2-ami-sagemaker-inference-gpu-3-1 host (driver 550, CUDA 12.4),
# which scripts/deploy.ts selects for GPU instances; onnxruntime-node's CUDA 12 build runs on any
# CUDA 12.x with cuDNN 9. Runtime flavour: no compiler, and no driver (the host provides it).
ARG CUDA_IMAGE=nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04

FROM ${NODE_IMAGE} AS node

# ---- dependencies -------------------------------------------------------------------------------
FROM node AS manifest
WORKDIR /opt/program
COPY package.json package-lock.json .npmrc ./

FROM manifest AS deps-cpu
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund

# .npmrc skips onnxruntime-node's download of the CUDA provider; the environment variable wins over
# it, so here the postinstall fetches the CUDA 12 provider libraries (from NuGet).
FROM manifest AS deps-gpu
RUN --mount=type=cache,target=/root/.npm ONNXRUNTIME_NODE_INSTALL=cuda12 npm ci --no-audit --no-fund

# ---- TypeScript -> dist/ (once for both targets) ------------------------------------------------
FROM deps-cpu AS compile
COPY tsconfig.json tsconfig.build.json ./
COPY server ./server
COPY model ./model
COPY client ./client
COPY scripts ./scripts
RUN npm run build && test -f dist/server/main.js && test -f dist/model/kokoro-config.json

# ---- production node_modules --------------------------------------------------------------------
FROM deps-cpu AS prod-cpu
COPY docker/prune-modules.sh ./docker/
RUN npm prune --omit=dev --no-audit --no-fund && sh docker/prune-modules.sh node_modules

FROM deps-gpu AS prod-gpu
COPY docker/prune-modules.sh ./docker/
# A GPU image without the CUDA provider would quietly run on CPU (or not start with
# KOKORO_DEVICE=cuda): fail the build instead.
RUN npm prune --omit=dev --no-audit --no-fund && sh docker/prune-modules.sh node_modules \
 && if [ ! -f node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so ]; then \
      echo "libonnxruntime_providers_cuda.so is absent: ONNXRUNTIME_NODE_INSTALL=cuda12 npm ci did not install the CUDA provider" >&2; \
      exit 1; \
    fi

# ---- optional baked weights ---------------------------------------------------------------------
FROM compile AS model
ARG BAKE_MODEL=0
ARG KOKORO_DTYPE=fp32
ARG HF_ENDPOINT
# The cache mount keeps downloaded files across builds (fetch-model skips complete files).
RUN --mount=type=cache,target=/var/cache/kokoro-model \
    mkdir -p /opt/kokoro-model \
 && if [ "$BAKE_MODEL" = 1 ]; then \
      node dist/scripts/fetch-model.js --out "/var/cache/kokoro-model/$KOKORO_DTYPE" --dtype "$KOKORO_DTYPE" \
      && cp -a "/var/cache/kokoro-model/$KOKORO_DTYPE/." /opt/kokoro-model/; \
    fi

# ---- gpu target ---------------------------------------------------------------------------------
FROM ${CUDA_IMAGE} AS gpu
ARG KOKORO_DTYPE=fp32
# ffmpeg for AAC (the other formats are encoded in JavaScript/WebAssembly).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ffmpeg \
 && rm -rf /var/lib/apt/lists/*
COPY --from=node /usr/local/bin/node /usr/local/bin/node
WORKDIR /opt/program
COPY --from=manifest /opt/program/package.json ./
COPY --from=prod-gpu /opt/program/node_modules ./node_modules
COPY --from=compile /opt/program/dist ./dist
COPY --chmod=0755 docker/entrypoint.sh ./docker/
COPY --from=model /opt/kokoro-model /opt/kokoro-model
# cuda, not auto: on a GPU endpoint a CUDA failure should fail the deployment with its reason in the
# log, not leave a healthy-looking endpoint running on CPU. `-e KOKORO_DEVICE=auto` to allow CPU.
ENV KOKORO_DEVICE=cuda \
    KOKORO_DTYPE=${KOKORO_DTYPE} \
    KOKORO_MODEL_DIR=/opt/ml/model \
    KOKORO_BAKED_MODEL_DIR=/opt/kokoro-model
LABEL com.amazonaws.sagemaker.capabilities.bidirectional-streaming=true \
      com.amazonaws.sagemaker.capabilities.accept-bind-to-port=true
EXPOSE 8080
# Runs as root, as SageMaker expects. Exec form: the entrypoint execs Node, which gets SIGTERM.
ENTRYPOINT ["/opt/program/docker/entrypoint.sh"]
CMD ["serve"]

# ---- cpu target (last, so a plain `docker build .` gives the image that runs anywhere) ----------
FROM node AS cpu
ARG KOKORO_DTYPE=fp32
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ffmpeg \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/program
COPY --from=manifest /opt/program/package.json ./
COPY --from=prod-cpu /opt/program/node_modules ./node_modules
COPY --from=compile /opt/program/dist ./dist
COPY --chmod=0755 docker/entrypoint.sh ./docker/
COPY --from=model /opt/kokoro-model /opt/kokoro-model
ENV KOKORO_DEVICE=cpu \
    KOKORO_DTYPE=${KOKORO_DTYPE} \
    KOKORO_MODEL_DIR=/opt/ml/model \
    KOKORO_BAKED_MODEL_DIR=/opt/kokoro-model
LABEL com.amazonaws.sagemaker.capabilities.bidirectional-streaming=true \
      com.amazonaws.sagemaker.capabilities.accept-bind-to-port=true
EXPOSE 8080
ENTRYPOINT ["/opt/program/docker/entrypoint.sh"]
CMD ["serve"]
