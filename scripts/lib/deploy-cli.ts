/**
 * The command line of `npm run deploy`: `deploy|destroy [flags]` parsed and checked into the options
 * of lib/deploy-sagemaker.ts (a plan file read and checked through lib/deploy-plan.ts), the AWS
 * calls `--dry-run` prints, and the help text.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { intFlag, UsageError } from './cli.ts';
import {
  autoscalingCalls,
  autoscalingRemovalCalls,
  DEFAULT_METRICS_NAMESPACE,
  emfEnvironment,
  type AutoscalingOptions,
} from './deploy-autoscaling.ts';
import type { ApiCall } from './deploy-aws.ts';
import { readPlan } from './deploy-plan.ts';
import {
  DEFAULT_DOWNLOAD_TIMEOUT_S,
  DEFAULT_INSTANCE_TYPE,
  DEFAULT_STARTUP_TIMEOUT_S,
  deployRequests,
  destroyRequests,
  GPU_AMI_VERSION,
  GPU_AMIS,
  isGpuInstance,
  scalingTarget,
  type DeployOptions,
} from './deploy-sagemaker.ts';

/** SageMaker resource names: letters, digits and hyphens, at most 63 characters. */
const NAME_PATTERN = /^[a-zA-Z0-9](-*[a-zA-Z0-9])*$/;
const LONGEST_SUFFIX = '-config';

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
