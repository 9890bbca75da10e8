# syntax=docker/dockerfile:1
#
# Kokoro-82M streaming TTS server as an Amazon SageMaker real-time endpoint image.
#
#   docker build --target gpu -t kokoro-tts:gpu .    # CUDA 13 + cuDNN 9 (ml.g5: NVIDIA A10G)
#   docker build --target cpu -t kokoro-tts:cpu .
#   docker run --gpus all IMAGE gpu-check             # proves CUDA loads, and measures it
#
# Every stage is linux/amd64: SageMaker's instances are x86_64, and a build on an arm64 machine
# (Apple silicon) must not quietly produce an image that cannot run there.
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
# onnxruntime-node 1.30's CUDA provider (NuGet Microsoft.ML.OnnxRuntime.Gpu.Linux 1.30.0) is a CUDA 13
# build that needs cuDNN 9: since ONNX Runtime 1.27 the GPU packages on NuGet are built with CUDA 13,
# and the CUDA 12 ones moved to a separate, deprecated feed (see the README, "GPU"). CUDA 13 needs
# NVIDIA driver 580 or newer on the host: SageMaker's al2023-ami-sagemaker-inference-gpu-4-1, which
# scripts/deploy.ts selects for GPU instances. Runtime flavour: no compiler, and no driver (the host
# provides it). docker/check-cuda-deps.sh below proves at build time that the two match.
ARG CUDA_IMAGE=nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04

FROM --platform=linux/amd64 ${NODE_IMAGE} AS node

# ---- dependencies -------------------------------------------------------------------------------
# --ignore-scripts: no dependency's install script is needed at run time (sharp and esbuild serve
# only kokoro-js's and the tests' unused paths), and the one that matters is run explicitly below,
# whatever npm version's policy on install scripts is.
FROM node AS manifest
WORKDIR /opt/program
COPY package.json package-lock.json .npmrc ./

FROM manifest AS deps-cpu
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund --ignore-scripts

# onnxruntime-node's own install script fetches the CUDA provider libraries from NuGet: forced here
# (ONNXRUNTIME_NODE_INSTALL=1), since .npmrc skips it everywhere else.
FROM deps-cpu AS deps-gpu
RUN ONNXRUNTIME_NODE_INSTALL=1 node node_modules/onnxruntime-node/script/install.js \
 && test -f node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so

# ---- TypeScript -> dist/ (once for both targets) ------------------------------------------------
FROM deps-cpu AS compile
COPY tsconfig.json tsconfig.build.json ./
COPY server ./server
COPY model ./model
COPY protocol ./protocol
COPY client ./client
COPY scripts ./scripts
RUN npm run build && test -f dist/server/main.js && test -f dist/model/kokoro/config.json

# ---- production node_modules --------------------------------------------------------------------
FROM deps-cpu AS prod-cpu
COPY docker/prune-modules.sh ./docker/
RUN npm prune --omit=dev --no-audit --no-fund --ignore-scripts && sh docker/prune-modules.sh node_modules

FROM deps-gpu AS prod-gpu
COPY docker/prune-modules.sh ./docker/
RUN npm prune --omit=dev --no-audit --no-fund --ignore-scripts && sh docker/prune-modules.sh node_modules

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
FROM --platform=linux/amd64 ${CUDA_IMAGE} AS gpu
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
# The browser page's static files: off here (WEB_PAGE=false below, and SageMaker routes no `/`);
# `-e WEB_PAGE=true` turns it on for a local run.
COPY web ./web
COPY --chmod=0755 docker/entrypoint.sh docker/check-cuda-deps.sh ./docker/
# The proof that CUDA can load: every provider library's dependencies resolve against this image's
# CUDA and cuDNN (the build fails otherwise), and the build log shows their versions.
RUN sh docker/check-cuda-deps.sh node_modules/onnxruntime-node/bin/napi-v6/linux/x64
COPY --from=model /opt/kokoro-model /opt/kokoro-model
# cuda, not auto: on a GPU endpoint a CUDA failure should fail the deployment with its reason in the
# log, not leave a healthy-looking endpoint running on CPU. `-e KOKORO_DEVICE=auto` to allow CPU.
# METRICS_EMF: per-instance metrics as EMF log lines, which CloudWatch Logs turns into metrics from
# the endpoint's log group (no agent, no extra permission); the deploy tooling sets their dimensions.
ENV KOKORO_DEVICE=cuda \
    KOKORO_DTYPE=${KOKORO_DTYPE} \
    KOKORO_MODEL_DIR=/opt/ml/model \
    KOKORO_BAKED_MODEL_DIR=/opt/kokoro-model \
    WEB_PAGE=false \
    METRICS_EMF=true
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
COPY web ./web
COPY --chmod=0755 docker/entrypoint.sh ./docker/
COPY --from=model /opt/kokoro-model /opt/kokoro-model
ENV KOKORO_DEVICE=cpu \
    KOKORO_DTYPE=${KOKORO_DTYPE} \
    KOKORO_MODEL_DIR=/opt/ml/model \
    KOKORO_BAKED_MODEL_DIR=/opt/kokoro-model \
    WEB_PAGE=false \
    METRICS_EMF=true
LABEL com.amazonaws.sagemaker.capabilities.bidirectional-streaming=true \
      com.amazonaws.sagemaker.capabilities.accept-bind-to-port=true
EXPOSE 8080
ENTRYPOINT ["/opt/program/docker/entrypoint.sh"]
CMD ["serve"]
