/**
 * The SageMaker side of `npm run deploy`: the model, endpoint configuration and endpoint requests
 * built from the options, waiting for the endpoint to come InService, and removing it all again
 * (autoscaling first, lib/deploy-autoscaling.ts). The request builders are pure, for `--dry-run`
 * and the tests; `deploy` and `destroy` send them through injected clients.
 */
import { ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import {
  CreateEndpointCommand,
  CreateEndpointConfigCommand,
  CreateModelCommand,
  DeleteEndpointCommand,
  DeleteEndpointConfigCommand,
  DeleteModelCommand,
  DescribeEndpointCommand,
  SageMakerClient,
  type CreateEndpointCommandInput,
  type CreateEndpointConfigCommandInput,
  type CreateModelCommandInput,
  type DeleteEndpointCommandInput,
  type DeleteEndpointConfigCommandInput,
  type DeleteModelCommandInput,
  type ModelDataSource,
  type ProductionVariantInferenceAmiVersion,
  type ProductionVariantInstanceType,
} from '@aws-sdk/client-sagemaker';
import { setTimeout as delay } from 'node:timers/promises';
import {
  autoscalingRemovalSteps,
  emfEnvironment,
  registerAutoscaling,
  type AutoscalingClients,
  type AutoscalingOptions,
  type ScalingTarget,
} from './deploy-autoscaling.ts';
import { isNotFound, runRemovals } from './deploy-aws.ts';

export const DEFAULT_INSTANCE_TYPE = 'ml.g5.xlarge';
/**
 * SageMaker's GPU host images (`InferenceAmiVersion`) with the NVIDIA driver and the newest CUDA it
 * runs, as the ProductionVariant API reference lists them. SageMaker's default host for ml.g5 has
 * driver 470 (CUDA 11.4), too old for the image.
 */
export const GPU_AMIS = {
  'al2-ami-sagemaker-inference-gpu-2': { driver: '535', cuda: '12.2' },
  'al2-ami-sagemaker-inference-gpu-2-1': { driver: '535', cuda: '12.2' },
  'al2-ami-sagemaker-inference-gpu-3-1': { driver: '550', cuda: '12.4' },
  'al2023-ami-sagemaker-inference-gpu-4-1': { driver: '580', cuda: '13.0' },
} as const satisfies Record<string, { driver: string; cuda: string }>;

/**
 * Host image for GPU instances: driver 580, which runs the image's CUDA 13.0 (onnxruntime-node 1.30's
 * CUDA provider is a CUDA 13 build; CUDA 13 needs driver 580 or newer).
 */
export const GPU_AMI_VERSION: keyof typeof GPU_AMIS = 'al2023-ami-sagemaker-inference-gpu-4-1';
/** Time SageMaker gives the container to answer GET /ping with 200 (model load and warm-up). */
export const DEFAULT_STARTUP_TIMEOUT_S = 600;
/** Time SageMaker gives itself to copy the model data from S3 onto the instance. */
export const DEFAULT_DOWNLOAD_TIMEOUT_S = 600;
export const DEFAULT_POLL_MS = 15_000;
export const DEFAULT_WAIT_TIMEOUT_MS = 60 * 60_000;
/** The endpoint's one production variant: what autoscaling scales and the metrics' VariantName. */
export const VARIANT_NAME = 'AllTraffic';

export interface DeployOptions {
  /** Base name: the endpoint is called this; the model and configuration get suffixes. */
  readonly name: string;
  /** ECR image URI. */
  readonly image: string;
  /** IAM role SageMaker assumes to pull the image and read the model data. */
  readonly role: string;
  /** An S3 prefix holding the model directory (uncompressed), or an `s3://….tar.gz` object. */
  readonly modelS3: string;
  readonly instanceType: string;
  /** Initial instance count: --instance-count, else the plan's min_instances, else 1. */
  readonly instanceCount: number;
  /** Environment of the container given with --env (KOKORO_DTYPE, KOKORO_DEVICE, …). */
  readonly env: Readonly<Record<string, string>>;
  /** InferenceAmiVersion of the variant; undefined leaves SageMaker's default. */
  readonly amiVersion: string | undefined;
  readonly startupTimeoutS: number;
  readonly downloadTimeoutS: number;
  /** Autoscaling and alarms from a plan (--autoscaling); undefined for a fixed fleet. */
  readonly autoscaling: AutoscalingOptions | undefined;
}

export interface ResourceNames {
  readonly model: string;
  readonly endpointConfig: string;
  readonly endpoint: string;
}

/** The endpoint failed, or did not come up in time. */
export class DeployError extends Error {
  override readonly name = 'DeployError';
}

export function resourceNames(name: string): ResourceNames {
  return { model: `${name}-model`, endpointConfig: `${name}-config`, endpoint: name };
}

/** True for instance families with NVIDIA GPUs (ml.g4dn, ml.g5, ml.g6, ml.p3, ml.p4d, ml.p5, …). */
export function isGpuInstance(instanceType: string): boolean {
  return /^ml\.[gp]\d/.test(instanceType);
}

/**
 * Where the model data comes from. A prefix is copied as it is into /opt/ml/model (no archive to
 * build or unpack); a `.tar.gz` object is unpacked there by SageMaker.
 */
export function modelDataSource(uri: string): ModelDataSource {
  if (/\.(tar\.gz|tgz)$/.test(uri)) {
    return { S3DataSource: { S3Uri: uri, S3DataType: 'S3Object', CompressionType: 'Gzip' } };
  }
  // SageMaker wants a prefix that ends with a slash for uncompressed model data.
  const prefix = uri.endsWith('/') ? uri : `${uri}/`;
  return { S3DataSource: { S3Uri: prefix, S3DataType: 'S3Prefix', CompressionType: 'None' } };
}

/** The variant that autoscaling scales and the metrics describe. */
export function scalingTarget(name: string): ScalingTarget {
  return { endpoint: resourceNames(name).endpoint, variant: VARIANT_NAME };
}

/**
 * The container's environment: with a plan, its admission limits (an --env of the same name wins)
 * and the EMF settings the TTFA alarm depends on (parseCli refuses an --env that contradicts them).
 */
export function containerEnvironment(options: DeployOptions): Record<string, string> {
  if (options.autoscaling === undefined) return { ...options.env };
  return {
    ...options.autoscaling.plan.admission,
    ...options.env,
    ...emfEnvironment(scalingTarget(options.name), options.autoscaling.metricsNamespace),
  };
}

export interface DeployRequests {
  readonly model: CreateModelCommandInput;
  readonly endpointConfig: CreateEndpointConfigCommandInput;
  readonly endpoint: CreateEndpointCommandInput;
}

export function deployRequests(options: DeployOptions): DeployRequests {
  const names = resourceNames(options.name);
  return {
    model: {
      ModelName: names.model,
      ExecutionRoleArn: options.role,
      PrimaryContainer: {
        Image: options.image,
        ModelDataSource: modelDataSource(options.modelS3),
        Environment: containerEnvironment(options),
      },
    },
    endpointConfig: {
      EndpointConfigName: names.endpointConfig,
      ProductionVariants: [
        {
          VariantName: VARIANT_NAME,
          ModelName: names.model,
          InstanceType: options.instanceType as ProductionVariantInstanceType,
          InitialInstanceCount: options.instanceCount,
          InitialVariantWeight: 1,
          ContainerStartupHealthCheckTimeoutInSeconds: options.startupTimeoutS,
          ModelDataDownloadTimeoutInSeconds: options.downloadTimeoutS,
          ...(options.amiVersion === undefined
            ? {}
            : { InferenceAmiVersion: options.amiVersion as ProductionVariantInferenceAmiVersion }),
        },
      ],
    },
    endpoint: { EndpointName: names.endpoint, EndpointConfigName: names.endpointConfig },
  };
}

export interface DestroyRequests {
  readonly endpoint: DeleteEndpointCommandInput;
  readonly endpointConfig: DeleteEndpointConfigCommandInput;
  readonly model: DeleteModelCommandInput;
}

export function destroyRequests(name: string): DestroyRequests {
  const names = resourceNames(name);
  return {
    endpoint: { EndpointName: names.endpoint },
    endpointConfig: { EndpointConfigName: names.endpointConfig },
    model: { ModelName: names.model },
  };
}

/** The parts of the client the commands use: `send`, so tests can mock it. */
export type SageMaker = Pick<SageMakerClient, 'send'>;

/** The clients deploy and destroy use; injected, so that tests pass mocks. */
export interface AwsClients extends AutoscalingClients {
  readonly sagemaker: SageMaker;
}

/** Real clients for `region` (undefined: the SDK's own lookup). */
export function createAwsClients(region: string | undefined): AwsClients {
  const config = region === undefined ? {} : { region };
  return {
    sagemaker: new SageMakerClient(config),
    autoscaling: new ApplicationAutoScalingClient(config),
    cloudwatch: new CloudWatchClient(config),
  };
}

export interface RunIo {
  /** Progress and results, one line per call (no newline). */
  log(line: string): void;
  /** Redraws a status line in place on a terminal; falls back to `log`. */
  status?(line: string): void;
  sleep?(ms: number): Promise<void>;
  now?(): number;
  pollMs?: number;
  waitTimeoutMs?: number;
}

export function formatElapsed(ms: number): string {
  const total = Math.floor(ms / 1000);
  const minutes = Math.floor(total / 60);
  const seconds = total % 60;
  return minutes > 0 ? `${minutes}m${String(seconds).padStart(2, '0')}s` : `${seconds}s`;
}

/**
 * Polls DescribeEndpoint until the endpoint is InService, printing its status and the time elapsed.
 * A Failed endpoint throws with SageMaker's FailureReason.
 */
export async function waitForEndpoint(client: SageMaker, endpointName: string, io: RunIo): Promise<void> {
  const now = io.now ?? Date.now;
  const sleep = io.sleep ?? ((ms: number) => delay(ms));
  const pollMs = io.pollMs ?? DEFAULT_POLL_MS;
  const timeoutMs = io.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  const status = io.status ?? io.log;
  const start = now();
  for (;;) {
    const elapsed = now() - start;
    let state: string;
    let reason: string | undefined;
    try {
      const described = await client.send(new DescribeEndpointCommand({ EndpointName: endpointName }));
      state = described.EndpointStatus ?? 'Unknown';
      reason = described.FailureReason;
    } catch (error) {
      // Right after CreateEndpoint, Describe can briefly say the endpoint does not exist yet.
      if (!isNotFound(error) || elapsed > 60_000) throw error;
      state = 'Pending';
    }
    status(`endpoint ${endpointName}: ${state} (${formatElapsed(elapsed)})`);
    if (state === 'InService') return;
    if (state === 'Failed' || state === 'OutOfService' || state === 'Deleting') {
      throw new DeployError(
        `Endpoint ${endpointName} is ${state}: ${reason ?? 'no reason given'}. ` +
          `The container's log is in CloudWatch, log group /aws/sagemaker/Endpoints/${endpointName}.`,
      );
    }
    if (elapsed >= timeoutMs) {
      throw new DeployError(
        `Endpoint ${endpointName} is still ${state} after ${formatElapsed(elapsed)}; stopped waiting (it may still come up).`,
      );
    }
    await sleep(pollMs);
  }
}

/**
 * Creates the model, the endpoint configuration and the endpoint, and waits unless `wait` is false;
 * then, with a plan, registers autoscaling and puts the alarms.
 */
export async function deploy(
  clients: AwsClients,
  options: DeployOptions,
  io: RunIo,
  wait = true,
): Promise<void> {
  if (!wait && options.autoscaling !== undefined) {
    throw new DeployError('Autoscaling needs the endpoint InService, so deploy has to wait for it.');
  }
  const requests = deployRequests(options);
  const names = resourceNames(options.name);
  const { sagemaker } = clients;
  const hint = (error: unknown) => {
    if (error instanceof Error && /already exist/i.test(error.message)) {
      error.message += ` (run \`npm run deploy -- destroy --name ${options.name}\` first)`;
    }
    return error;
  };
  try {
    await sagemaker.send(new CreateModelCommand(requests.model));
    io.log(`created model ${names.model}`);
    await sagemaker.send(new CreateEndpointConfigCommand(requests.endpointConfig));
    io.log(`created endpoint configuration ${names.endpointConfig}`);
    await sagemaker.send(new CreateEndpointCommand(requests.endpoint));
    io.log(`creating endpoint ${names.endpoint} (${options.instanceCount} × ${options.instanceType})`);
  } catch (error) {
    throw hint(error);
  }
  if (!wait) return;
  await waitForEndpoint(sagemaker, names.endpoint, io);
  io.log(`endpoint ${names.endpoint} is InService`);
  if (options.autoscaling === undefined) return;
  try {
    await registerAutoscaling(clients, scalingTarget(options.name), options.autoscaling, io.log);
  } catch (error) {
    if (error instanceof Error) {
      error.message +=
        ` (endpoint ${names.endpoint} is InService, but its autoscaling or alarms are incomplete; ` +
        `once the cause is fixed, run \`npm run deploy -- destroy --name ${options.name}\` and deploy again)`;
    }
    throw error;
  }
}

/**
 * Deletes the alarms, the scaling policies and the scalable target, then the endpoint, its
 * configuration and the model, in that order; missing ones are skipped.
 */
export async function destroy(clients: AwsClients, name: string, io: RunIo): Promise<void> {
  const requests = destroyRequests(name);
  const names = resourceNames(name);
  const { sagemaker } = clients;
  await runRemovals(
    [
      // Autoscaling first: it refers to the variant, and a scaling activity could otherwise act
      // on an endpoint that is being deleted.
      ...autoscalingRemovalSteps(clients, scalingTarget(name)),
      {
        what: `endpoint ${names.endpoint}`,
        done: 'deleted',
        run: () => sagemaker.send(new DeleteEndpointCommand(requests.endpoint)),
      },
      {
        what: `endpoint configuration ${names.endpointConfig}`,
        done: 'deleted',
        run: () => sagemaker.send(new DeleteEndpointConfigCommand(requests.endpointConfig)),
      },
      {
        what: `model ${names.model}`,
        done: 'deleted',
        run: () => sagemaker.send(new DeleteModelCommand(requests.model)),
      },
    ],
    io.log,
  );
}
