/**
 * scripts/deploy.ts's command line: flags, defaults and refusals, --dry-run's JSON lines, and `main`
 * end to end over mocked clients.
 */
import { DescribeEndpointCommand } from '@aws-sdk/client-sagemaker';
import { describe, expect, it } from 'vitest';
import { GPU_AMI_VERSION, UsageError, deployRequests, main, parseCli } from '../../../scripts/deploy.ts';
import {
  sagemaker,
  clients,
  allCalls,
  IMAGE,
  TOPIC,
  FLAGS,
  OPTIONS,
  READ_PLAN,
  capture,
  deployCli,
  dryRun,
  resetMocksAroundEach,
} from './deploy-mocks.ts';

resetMocksAroundEach();

describe('command line', () => {
  it('defaults to one ml.g5.xlarge with the GPU host image and an uncompressed S3 prefix', () => {
    const cli = parseCli(['deploy', ...FLAGS, '--env', 'KOKORO_DTYPE=fp16', '--env', 'LOG_LEVEL=debug']);
    expect(cli).toMatchObject({
      command: 'deploy',
      dryRun: false,
      wait: true,
      options: {
        ...OPTIONS,
        modelS3: 's3://models/kokoro-82m',
        env: { KOKORO_DTYPE: 'fp16', LOG_LEVEL: 'debug' },
      },
    });
  });

  it('takes the region from --region, else AWS_REGION, else AWS_DEFAULT_REGION', () => {
    const region = (argv: string[], env: NodeJS.ProcessEnv) => {
      const cli = parseCli(['destroy', '--name', 'kokoro', ...argv], env);
      return cli.help ? undefined : cli.region;
    };
    expect(region(['--region', 'eu-west-1'], { AWS_REGION: 'us-east-1' })).toBe('eu-west-1');
    expect(region([], { AWS_REGION: 'us-east-1', AWS_DEFAULT_REGION: 'us-west-2' })).toBe('us-east-1');
    expect(region([], { AWS_DEFAULT_REGION: 'us-west-2' })).toBe('us-west-2');
    expect(region([], {})).toBeUndefined();
  });

  it('leaves the host image alone on CPU instances, and on request', () => {
    const ami = (argv: string[]) => deployCli(argv).options.amiVersion;
    expect(ami(['--instance-type', 'ml.c7i.xlarge'])).toBeUndefined();
    expect(ami(['--instance-type', 'ml.g6.xlarge'])).toBe(GPU_AMI_VERSION);
    expect(ami(['--ami-version', 'none'])).toBeUndefined();
    expect(ami(['--ami-version', 'al2-ami-sagemaker-inference-gpu-2-1'])).toBe(
      'al2-ami-sagemaker-inference-gpu-2-1',
    );
  });

  it('sends a .tar.gz object as compressed model data', () => {
    const cli = deployCli(['--model-s3', 's3://models/kokoro/model.tar.gz']);
    expect(deployRequests(cli.options).model.PrimaryContainer?.ModelDataSource).toEqual({
      S3DataSource: {
        S3Uri: 's3://models/kokoro/model.tar.gz',
        S3DataType: 'S3Object',
        CompressionType: 'Gzip',
      },
    });
  });

  it('refuses what SageMaker would refuse, naming the flag', () => {
    const plan = ['--autoscaling', 'plan.json'];
    const bad: [string[], RegExp][] = [
      [[], /Name a command/],
      [['launch', ...FLAGS], /Unknown command "launch"/],
      [['deploy', '--image', IMAGE], /--name is required/],
      [['deploy', '--name', 'kokoro'], /--image is required/],
      [['deploy', ...FLAGS, '--name', 'bad_name'], /--name "bad_name"/],
      [['deploy', ...FLAGS, '--name', 'x'.repeat(57)], /at most 56 characters/],
      [['deploy', ...FLAGS, '--role', 'SageMakerRole'], /--role should be an IAM role ARN/],
      [['deploy', ...FLAGS, '--model-s3', 'models/kokoro'], /--model-s3 should be s3:\/\//],
      [['deploy', ...FLAGS, '--env', 'NOVALUE'], /--env should be KEY=VALUE/],
      [['deploy', ...FLAGS, '--instance-count', '0'], /--instance-count should be a whole number/],
      [
        ['deploy', ...FLAGS, '--startup-timeout', '3601'],
        /--startup-timeout should be a whole number from 1 to 3600/,
      ],
      [['deploy', ...FLAGS, '--bogus'], /bogus/],
      [
        ['deploy', ...FLAGS, '--metrics-namespace', 'Kokoro'],
        /--metrics-namespace only applies with --autoscaling/,
      ],
      [['deploy', ...FLAGS, '--alarm-topic', TOPIC], /--alarm-topic only applies with --autoscaling/],
      [['deploy', ...FLAGS, ...plan, '--no-wait'], /--autoscaling and --no-wait do not go together/],
      [
        ['deploy', ...FLAGS, ...plan, '--metrics-namespace', 'AWS/SageMaker'],
        /--metrics-namespace should be/,
      ],
      [
        ['deploy', ...FLAGS, ...plan, '--alarm-topic', 'kokoro-alarms'],
        /--alarm-topic should be an SNS topic ARN/,
      ],
      [
        ['deploy', ...FLAGS, ...plan, '--instance-count', '60'],
        /--instance-count 60 is outside the plan's min_instances to max_instances \(3 to 50\)/,
      ],
      [
        ['deploy', ...FLAGS, ...plan, '--env', 'METRICS_EMF_NAMESPACE=Other'],
        /--env METRICS_EMF_NAMESPACE=Other contradicts --autoscaling.*use --metrics-namespace instead/,
      ],
      [
        ['deploy', ...FLAGS, ...plan, '--env', 'METRICS_EMF=false'],
        /--env METRICS_EMF=false contradicts --autoscaling, which sets METRICS_EMF=true/,
      ],
    ];
    for (const [argv, message] of bad) {
      expect(() => parseCli(argv, {}, READ_PLAN), argv.join(' ')).toThrow(UsageError);
      expect(() => parseCli(argv, {}, READ_PLAN), argv.join(' ')).toThrow(message);
    }
    // Repeating what --autoscaling sets is no contradiction.
    expect(deployCli([...plan, '--env', 'METRICS_EMF=true']).options.env).toEqual({ METRICS_EMF: 'true' });
  });

  it('--dry-run prints every deploy call as one JSON line and calls nothing', async () => {
    const { code, calls, stderr } = await dryRun(['deploy', ...FLAGS, '--env', 'KOKORO_DTYPE=fp16']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(allCalls()).toHaveLength(0);
    for (const call of calls) expect(Object.keys(call)).toEqual(['service', 'operation', 'input']);
    expect(calls.map((c) => [c.service, c.operation])).toEqual([
      ['sagemaker', 'CreateModel'],
      ['sagemaker', 'CreateEndpointConfig'],
      ['sagemaker', 'CreateEndpoint'],
      ['sagemaker', 'DescribeEndpoint'],
    ]);
    expect(calls[0]!.input).toMatchObject({
      ModelName: 'kokoro-model',
      PrimaryContainer: {
        // The prefix gets the trailing slash SageMaker wants for uncompressed model data.
        ModelDataSource: { S3DataSource: { S3Uri: 's3://models/kokoro-82m/', S3DataType: 'S3Prefix' } },
        Environment: { KOKORO_DTYPE: 'fp16' },
      },
    });
    expect(calls[1]!.input).toMatchObject({ ProductionVariants: [{ InstanceType: 'ml.g5.xlarge' }] });
    expect(calls[2]!.input).toEqual({ EndpointName: 'kokoro', EndpointConfigName: 'kokoro-config' });
    expect(calls[3]!.input).toEqual({ EndpointName: 'kokoro' });
  });

  it('--dry-run with --no-wait stops at CreateEndpoint', async () => {
    const { calls } = await dryRun(['deploy', ...FLAGS, '--no-wait']);
    expect(calls.map((c) => c.operation)).toEqual(['CreateModel', 'CreateEndpointConfig', 'CreateEndpoint']);
  });

  it('--dry-run with --autoscaling adds the autoscaling calls after the wait, the ARN as a placeholder', async () => {
    const { code, calls } = await dryRun(['deploy', ...FLAGS, '--autoscaling', 'plan.json']);
    expect(code).toBe(0);
    expect(allCalls()).toHaveLength(0);
    for (const call of calls) expect(Object.keys(call)).toEqual(['service', 'operation', 'input']);
    expect(calls.map((c) => [c.service, c.operation])).toEqual([
      ['sagemaker', 'CreateModel'],
      ['sagemaker', 'CreateEndpointConfig'],
      ['sagemaker', 'CreateEndpoint'],
      ['sagemaker', 'DescribeEndpoint'],
      ['application-autoscaling', 'RegisterScalableTarget'],
      ['application-autoscaling', 'PutScalingPolicy'],
      ['application-autoscaling', 'PutScalingPolicy'],
      ['cloudwatch', 'PutMetricAlarm'],
      ['cloudwatch', 'PutMetricAlarm'],
    ]);
    expect(calls[1]!.input).toMatchObject({ ProductionVariants: [{ InitialInstanceCount: 3 }] });
    expect(calls[7]!.input).toMatchObject({
      AlarmName: 'kokoro-scale-in',
      AlarmActions: ['<PolicyARN of kokoro-step-scale-in>'],
    });
    expect(calls[8]!.input).toMatchObject({ AlarmName: 'kokoro-ttfa-p95', ExtendedStatistic: 'p95' });
    expect(calls[8]!.input).not.toHaveProperty('AlarmActions');
  });

  it('--dry-run prints the destroy calls and calls nothing', async () => {
    const stdout = capture();
    const code = await main(['destroy', '--name', 'kokoro', '--dry-run'], {
      env: {},
      stdout,
      stderr: capture(),
    });
    expect(code).toBe(0);
    expect(allCalls()).toHaveLength(0);
    const scalable =
      '"ServiceNamespace":"sagemaker","ResourceId":"endpoint/kokoro/variant/AllTraffic",' +
      '"ScalableDimension":"sagemaker:variant:DesiredInstanceCount"';
    expect(stdout.text()).toBe(
      [
        '{"service":"cloudwatch","operation":"DeleteAlarms","input":{"AlarmNames":["kokoro-scale-in","kokoro-ttfa-p95"]}}',
        `{"service":"application-autoscaling","operation":"DeleteScalingPolicy","input":{"PolicyName":"kokoro-target-tracking",${scalable}}}`,
        `{"service":"application-autoscaling","operation":"DeleteScalingPolicy","input":{"PolicyName":"kokoro-step-scale-in",${scalable}}}`,
        `{"service":"application-autoscaling","operation":"DeregisterScalableTarget","input":{${scalable}}}`,
        '{"service":"sagemaker","operation":"DeleteEndpoint","input":{"EndpointName":"kokoro"}}',
        '{"service":"sagemaker","operation":"DeleteEndpointConfig","input":{"EndpointConfigName":"kokoro-config"}}',
        '{"service":"sagemaker","operation":"DeleteModel","input":{"ModelName":"kokoro-model"}}',
        '',
      ].join('\n'),
    );
  });

  it('runs deploy end to end through main, exit 1 with the reason on failure', async () => {
    sagemaker
      .on(DescribeEndpointCommand)
      .resolves({ EndpointStatus: 'Failed', FailureReason: 'CannotStartContainerError' });
    const stdout = capture();
    const stderr = capture();
    const regions: (string | undefined)[] = [];
    const code = await main(['deploy', ...FLAGS], {
      env: { AWS_REGION: 'us-east-1' },
      stdout,
      stderr,
      createClients: (region) => {
        regions.push(region);
        return clients();
      },
      run: { sleep: async () => {}, now: () => 0 },
    });
    expect(code).toBe(1);
    expect(regions).toEqual(['us-east-1']);
    expect(stdout.text()).toContain('endpoint kokoro: Failed (0s)');
    expect(stderr.text()).toMatch(/^deploy: Endpoint kokoro is Failed: CannotStartContainerError/);
  });

  it('exits 2 with a pointer to --help on a usage error', async () => {
    const stderr = capture();
    expect(await main(['deploy', '--name', 'kokoro'], { env: {}, stdout: capture(), stderr })).toBe(2);
    expect(stderr.text()).toBe('deploy: --image is required for deploy.\nRun with --help for usage.\n');
    expect(allCalls()).toHaveLength(0);
  });

  it('documents the autoscaling flags in --help', async () => {
    const stdout = capture();
    expect(await main(['--help'], { env: {}, stdout, stderr: capture() })).toBe(0);
    for (const flag of ['--autoscaling PLAN', '--metrics-namespace NS', '--alarm-topic ARN']) {
      expect(stdout.text()).toContain(flag);
    }
  });
});
