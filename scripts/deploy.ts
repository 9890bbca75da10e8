/**
 * Deploys the image as an Amazon SageMaker real-time endpoint, with autoscaling and alarms from a
 * capacity plan, and removes it all again.
 *
 *   npm run deploy -- deploy --name kokoro --image ACCOUNT.dkr.ecr.REGION.amazonaws.com/kokoro-tts:gpu \
 *     --role arn:aws:iam::ACCOUNT:role/ROLE --model-s3 s3://BUCKET/kokoro-82m/ [--env KOKORO_DTYPE=fp16] \
 *     [--autoscaling plan.json [--metrics-namespace NS] [--alarm-topic SNS_ARN]]
 *   npm run deploy -- destroy --name kokoro
 *
 * `deploy` creates the model (`NAME-model`), the endpoint configuration (`NAME-config`) and the
 * endpoint (`NAME`), then polls until the endpoint is InService. With `--autoscaling plan.json` (the
 * file `npm run plan` writes) the container also gets the plan's admission limits and EMF metric
 * settings, the fleet starts at the plan's minimum, and once the endpoint is InService the variant
 * gets Application Auto Scaling (target tracking out, step policy in) and two CloudWatch alarms
 * (scale-in, time-to-first-audio p95): see lib/deploy-autoscaling.ts.
 *
 * `destroy` removes the alarms, the policies and the scalable target, then the endpoint, its
 * configuration and the model; whatever is missing is skipped, so it also removes a deployment made
 * without autoscaling. `--dry-run` prints every AWS call either would make as one JSON line
 * (`{"service":…,"operation":…,"input":…}`) and calls nothing. The pure parts are exported for the
 * tests; the command line only runs when this file is the entry point.
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
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { intFlag, isMain, UsageError } from './lib/cli.ts';
import {
  autoscalingCalls,
  autoscalingRemovalCalls,
  autoscalingRemovalSteps,
  DEFAULT_METRICS_NAMESPACE,
  emfEnvironment,
  registerAutoscaling,
  type AutoscalingClients,
  type AutoscalingOptions,
  type ScalingTarget,
} from './lib/deploy-autoscaling.ts';
import { apiCallLine, isNotFound, runRemovals, type ApiCall } from './lib/deploy-aws.ts';
import { readPlan } from './lib/deploy-plan.ts';
export { UsageError, isNotFound, type ApiCall };
export {
  autoscalingCalls,
  autoscalingNames,
  autoscalingRemovalCalls,
  autoscalingRemovalRequests,
  autoscalingRequests,
  DEFAULT_METRICS_NAMESPACE,
  emfEnvironment,
  scaleInAlarmRequest,
  stepPolicyArnPlaceholder,
  type AutoscalingOptions,
  type ScalingTarget,
} from './lib/deploy-autoscaling.ts';
export { parsePlan, readPlan, type ScalingPlan } from './lib/deploy-plan.ts';

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
/** SageMaker resource names: letters, digits and hyphens, at most 63 characters. */
const NAME_PATTERN = /^[a-zA-Z0-9](-*[a-zA-Z0-9])*$/;
const LONGEST_SUFFIX = '-config';

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

/**
 * Every AWS call a command would make, in order, for `--dry-run`. DescribeEndpoint stands for the
 * polling (repeated every DEFAULT_POLL_MS until InService); the scale-in alarm carries a
 * placeholder for the step policy's ARN, which only PutScalingPolicy can tell.
 */
export function plannedRequests(cli: Extract<ParsedCli, { help: false }>): ApiCall[] {
  const target = scalingTarget(cli.name);
  if (cli.command === 'destroy') {
    const r = destroyRequests(cli.name);
    return [
      ...autoscalingRemovalCalls(target),
      { service: 'sagemaker', operation: 'DeleteEndpoint', input: r.endpoint },
      { service: 'sagemaker', operation: 'DeleteEndpointConfig', input: r.endpointConfig },
      { service: 'sagemaker', operation: 'DeleteModel', input: r.model },
    ];
  }
  const r = deployRequests(cli.options);
  const calls: ApiCall[] = [
    { service: 'sagemaker', operation: 'CreateModel', input: r.model },
    { service: 'sagemaker', operation: 'CreateEndpointConfig', input: r.endpointConfig },
    { service: 'sagemaker', operation: 'CreateEndpoint', input: r.endpoint },
  ];
  if (!cli.wait) return calls;
  calls.push({
    service: 'sagemaker',
    operation: 'DescribeEndpoint',
    input: { EndpointName: target.endpoint },
  });
  if (cli.options.autoscaling !== undefined) calls.push(...autoscalingCalls(target, cli.options.autoscaling));
  return calls;
}

export type ParsedCli =
  | { help: true }
  | {
      help: false;
      command: 'deploy';
      name: string;
      options: DeployOptions;
      region: string | undefined;
      dryRun: boolean;
      wait: boolean;
    }
  | { help: false; command: 'destroy'; name: string; region: string | undefined; dryRun: boolean };

/** CloudWatch namespaces: up to 255 of these characters; `AWS/` is reserved for AWS's own. */
const NAMESPACE_PATTERN = /^(?!AWS\/)[A-Za-z0-9 ._\-/#:]{1,255}$/;
const SNS_TOPIC_PATTERN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;

const readUtf8 = (path: string) => readFileSync(path, 'utf8');

/**
 * Parses `deploy|destroy [flags]`. The region defaults to AWS_REGION, then AWS_DEFAULT_REGION.
 * `--autoscaling` reads its plan file through `readText`.
 *
 * @throws {UsageError} for unknown commands or flags, missing or malformed values, and a plan file
 *   that is missing or invalid (the message names the field).
 */
export function parseCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
  readText: (path: string) => string = readUtf8,
): ParsedCli {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        image: { type: 'string' },
        role: { type: 'string' },
        'model-s3': { type: 'string' },
        'instance-type': { type: 'string' },
        'instance-count': { type: 'string' },
        region: { type: 'string' },
        env: { type: 'string', multiple: true },
        'ami-version': { type: 'string' },
        'startup-timeout': { type: 'string' },
        'download-timeout': { type: 'string' },
        autoscaling: { type: 'string' },
        'metrics-namespace': { type: 'string' },
        'alarm-topic': { type: 'string' },
        'no-wait': { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help === true) return { help: true };
  const [command, ...extra] = positionals;
  if (command !== 'deploy' && command !== 'destroy') {
    throw new UsageError(
      command === undefined ? 'Name a command: deploy or destroy.' : `Unknown command "${command}".`,
    );
  }
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}".`);

  const name = values.name;
  if (name === undefined) throw new UsageError('--name is required.');
  const maxName = 63 - LONGEST_SUFFIX.length;
  if (!NAME_PATTERN.test(name) || name.length > maxName) {
    throw new UsageError(
      `--name "${name}" should be letters, digits and hyphens (not first or last), at most ${maxName} characters.`,
    );
  }
  const region = values.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined);
  const dryRun = values['dry-run'] === true;
  if (command === 'destroy') return { help: false, command, name, region, dryRun };

  const required = (flag: 'image' | 'role' | 'model-s3'): string => {
    const value = values[flag];
    if (value === undefined || value.trim() === '') throw new UsageError(`--${flag} is required for deploy.`);
    return value.trim();
  };
  const image = required('image');
  const role = required('role');
  if (!/^arn:aws[a-z-]*:iam::\d{12}:role\/\S+$/.test(role)) {
    throw new UsageError(
      `--role should be an IAM role ARN (arn:aws:iam::123456789012:role/NAME); got "${role}".`,
    );
  }
  const modelS3 = required('model-s3');
  if (!/^s3:\/\/[^/]+\/\S+$/.test(modelS3)) {
    throw new UsageError(
      `--model-s3 should be s3://BUCKET/PREFIX/ (or s3://BUCKET/KEY.tar.gz); got "${modelS3}".`,
    );
  }
  const instanceType = values['instance-type'] ?? DEFAULT_INSTANCE_TYPE;
  if (!/^ml\.[a-z0-9-]+\.[a-z0-9]+$/.test(instanceType)) {
    throw new UsageError(`--instance-type should look like ml.g5.xlarge; got "${instanceType}".`);
  }
  const environment: Record<string, string> = {};
  for (const pair of values.env ?? []) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(pair);
    if (!match) throw new UsageError(`--env should be KEY=VALUE; got "${pair}".`);
    environment[match[1]!] = match[2]!;
  }
  const ami = values['ami-version'];
  const amiVersion =
    ami === 'none' ? undefined : (ami ?? (isGpuInstance(instanceType) ? GPU_AMI_VERSION : undefined));
  const wait = values['no-wait'] !== true;
  const autoscaling = parseAutoscaling(values, name, environment, wait, readText);
  const countFlag = values['instance-count'];
  const instanceCount =
    autoscaling !== undefined && countFlag === undefined
      ? autoscaling.plan.min_instances
      : intFlag('instance-count', countFlag, 1, 1, 100);
  if (autoscaling !== undefined) {
    const { min_instances: min, max_instances: max } = autoscaling.plan;
    if (instanceCount < min || instanceCount > max) {
      throw new UsageError(
        `--instance-count ${instanceCount} is outside the plan's min_instances to max_instances ` +
          `(${min} to ${max}); leave it out to start at ${min}.`,
      );
    }
  }
  return {
    help: false,
    command,
    name,
    region,
    dryRun,
    wait,
    options: {
      name,
      image,
      role,
      modelS3,
      instanceType,
      instanceCount,
      env: environment,
      amiVersion,
      startupTimeoutS: intFlag(
        'startup-timeout',
        values['startup-timeout'],
        DEFAULT_STARTUP_TIMEOUT_S,
        1,
        3600,
      ),
      downloadTimeoutS: intFlag(
        'download-timeout',
        values['download-timeout'],
        DEFAULT_DOWNLOAD_TIMEOUT_S,
        1,
        3600,
      ),
      autoscaling,
    },
  };
}

/** The --autoscaling, --metrics-namespace and --alarm-topic flags of deploy. */
function parseAutoscaling(
  values: {
    autoscaling?: string | undefined;
    'metrics-namespace'?: string | undefined;
    'alarm-topic'?: string | undefined;
  },
  name: string,
  environment: Readonly<Record<string, string>>,
  wait: boolean,
  readText: (path: string) => string,
): AutoscalingOptions | undefined {
  const planPath = values.autoscaling;
  if (planPath === undefined) {
    for (const flag of ['metrics-namespace', 'alarm-topic'] as const) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} only applies with --autoscaling PLAN.`);
    }
    return undefined;
  }
  if (!wait) {
    throw new UsageError(
      '--autoscaling and --no-wait do not go together: autoscaling can only be registered once the endpoint is InService.',
    );
  }
  const metricsNamespace = values['metrics-namespace'] ?? DEFAULT_METRICS_NAMESPACE;
  if (!NAMESPACE_PATTERN.test(metricsNamespace)) {
    throw new UsageError(
      '--metrics-namespace should be 1 to 255 letters, digits, spaces or . _ - / # : (not starting with "AWS/"); ' +
        `got "${metricsNamespace}".`,
    );
  }
  const alarmTopic = values['alarm-topic'];
  if (alarmTopic !== undefined && !SNS_TOPIC_PATTERN.test(alarmTopic)) {
    throw new UsageError(
      `--alarm-topic should be an SNS topic ARN (arn:aws:sns:REGION:123456789012:TOPIC); got "${alarmTopic}".`,
    );
  }
  // The TTFA alarm watches the namespace and dimensions these variables give the server's metrics:
  // an --env that changes them would leave the alarm looking at nothing.
  for (const [key, value] of Object.entries(emfEnvironment(scalingTarget(name), metricsNamespace))) {
    if (Object.hasOwn(environment, key) && environment[key] !== value) {
      throw new UsageError(
        `--env ${key}=${environment[key]} contradicts --autoscaling, which sets ${key}=${value} for the ` +
          `time-to-first-audio alarm; ${key === 'METRICS_EMF_NAMESPACE' ? 'use --metrics-namespace instead' : 'leave it out'}.`,
      );
    }
  }
  return { plan: readPlan(planPath, readText), metricsNamespace, alarmTopic };
}

export function helpText(): string {
  return `Deploy the image as a SageMaker real-time endpoint, with autoscaling and alarms from a plan, or remove it.

Usage:
  npm run deploy -- deploy  --name NAME --image URI --role ARN --model-s3 S3URI [--autoscaling PLAN] [options]
  npm run deploy -- destroy --name NAME [--region REGION] [--dry-run]

deploy creates model NAME-model, endpoint configuration NAME-config and endpoint NAME, then waits
until the endpoint is InService. With --autoscaling it then registers the variant with Application
Auto Scaling (NAME-target-tracking scales out, NAME-step-scale-in scales in one instance at a time)
and puts the CloudWatch alarms NAME-scale-in and NAME-ttfa-p95.
destroy deletes the alarms, the scaling policies, the scalable target, the endpoint, the
configuration and the model, in that order (missing ones are skipped).

Options:
  --name NAME             Endpoint name (letters, digits, hyphens; at most ${63 - LONGEST_SUFFIX.length} characters)
  --image URI             ECR image URI (the gpu target for GPU instances)
  --role ARN              IAM execution role SageMaker assumes (ECR pull, S3 read)
  --model-s3 S3URI        s3://BUCKET/PREFIX/ holding the model directory (copied uncompressed to
                          /opt/ml/model), or s3://BUCKET/KEY.tar.gz (unpacked there by SageMaker)
  --instance-type TYPE    Default ${DEFAULT_INSTANCE_TYPE}
  --instance-count N      Initial instances; default 1, or the plan's min_instances with --autoscaling
  --env KEY=VALUE         Container environment, repeatable (KOKORO_DTYPE=fp16, KOKORO_WORKERS=2, ...)
  --ami-version VERSION   InferenceAmiVersion; default ${GPU_AMI_VERSION} on GPU instances
                          (NVIDIA driver ${GPU_AMIS[GPU_AMI_VERSION].driver}, CUDA ${GPU_AMIS[GPU_AMI_VERSION].cuda}); "none" keeps SageMaker's default
  --startup-timeout S     Seconds for the container to answer /ping with 200 (default ${DEFAULT_STARTUP_TIMEOUT_S})
  --download-timeout S    Seconds for copying the model data (default ${DEFAULT_DOWNLOAD_TIMEOUT_S})
  --autoscaling PLAN      Capacity plan from \`npm run plan\` (JSON). The container gets the plan's
                          admission limits (an --env of the same name wins) and METRICS_EMF* settings;
                          the fleet starts at min_instances and scales up to max_instances
  --metrics-namespace NS  CloudWatch namespace of the server's EMF metrics, watched by NAME-ttfa-p95
                          (default ${DEFAULT_METRICS_NAMESPACE}; only with --autoscaling)
  --alarm-topic ARN       SNS topic NAME-ttfa-p95 notifies on alarm and on recovery (only with --autoscaling)
  --region REGION         Default $AWS_REGION, then $AWS_DEFAULT_REGION
  --no-wait               Return once CreateEndpoint is accepted (not with --autoscaling)
  --dry-run               Print every AWS call as one JSON line {"service","operation","input"}; call nothing
  -h, --help              Show this help
`;
}

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  /** Makes the clients; replaced by the tests. */
  createClients?: (region: string | undefined) => AwsClients;
  /** Reads the plan file; replaced by the tests. */
  readText?: (path: string) => string;
  run?: Omit<RunIo, 'log' | 'status'>;
}

/** Runs the CLI; returns the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let cli: ParsedCli;
  try {
    cli = parseCli(argv, io.env, io.readText);
  } catch (error) {
    io.stderr.write(`deploy: ${(error as Error).message}\nRun with --help for usage.\n`);
    return 2;
  }
  if (cli.help) {
    io.stdout.write(helpText());
    return 0;
  }
  if (cli.dryRun) {
    for (const call of plannedRequests(cli)) io.stdout.write(`${apiCallLine(call)}\n`);
    return 0;
  }
  if (cli.region === undefined && io.createClients === undefined) {
    io.stderr.write('deploy: no region: pass --region or set AWS_REGION.\n');
    return 2;
  }
  const clients = (io.createClients ?? createAwsClients)(cli.region);
  let redrawn = false;
  const runIo: RunIo = {
    ...io.run,
    log: (line) => {
      if (redrawn) io.stdout.write('\n');
      redrawn = false;
      io.stdout.write(`${line}\n`);
    },
    ...(io.stdout.isTTY === true
      ? {
          status: (line: string) => {
            io.stdout.write(`\r${line}\x1b[K`);
            redrawn = true;
          },
        }
      : {}),
  };
  try {
    if (cli.command === 'deploy') await deploy(clients, cli.options, runIo, cli.wait);
    else await destroy(clients, cli.name, runIo);
    return 0;
  } catch (error) {
    if (redrawn) io.stdout.write('\n');
    io.stderr.write(`deploy: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

if (isMain(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2), {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
  });
}
