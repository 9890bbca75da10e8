/** scripts/deploy.ts against a mocked SageMaker client: the exact requests, waiting, and removal. */
import {
  CreateEndpointCommand,
  CreateEndpointConfigCommand,
  CreateModelCommand,
  DeleteEndpointCommand,
  DeleteEndpointConfigCommand,
  DeleteModelCommand,
  DescribeEndpointCommand,
  SageMakerClient,
  SageMakerServiceException,
} from '@aws-sdk/client-sagemaker';
import { mockClient } from 'aws-sdk-client-mock';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DeployError,
  GPU_AMI_VERSION,
  UsageError,
  deploy,
  deployRequests,
  destroy,
  isNotFound,
  main,
  parseCli,
  waitForEndpoint,
  type DeployOptions,
  type RunIo,
} from '../../scripts/deploy.ts';

const sagemaker = mockClient(SageMakerClient);
const client = () => new SageMakerClient({ region: 'us-east-1' });

const ROLE = 'arn:aws:iam::123456789012:role/SageMakerRole';
const IMAGE = '123456789012.dkr.ecr.us-east-1.amazonaws.com/kokoro-tts:gpu';
const FLAGS = ['--name', 'kokoro', '--image', IMAGE, '--role', ROLE, '--model-s3', 's3://models/kokoro-82m'];

const OPTIONS: DeployOptions = {
  name: 'kokoro',
  image: IMAGE,
  role: ROLE,
  modelS3: 's3://models/kokoro-82m/',
  instanceType: 'ml.g5.xlarge',
  instanceCount: 1,
  env: { KOKORO_DTYPE: 'fp16' },
  amiVersion: GPU_AMI_VERSION,
  startupTimeoutS: 600,
  downloadTimeoutS: 600,
};

/** A fake clock advanced by `sleep`, and the lines printed. */
function fakeIo(pollMs = 15_000): RunIo & { lines: string[] } {
  let t = 0;
  const lines: string[] = [];
  return {
    lines,
    log: (line) => lines.push(line),
    now: () => t,
    sleep: async (ms) => {
      t += ms;
    },
    pollMs,
  };
}

function notFound(message: string): SageMakerServiceException {
  return new SageMakerServiceException({
    name: 'ValidationException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message,
  });
}

function capture(): Writable & { text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk);
      done();
    },
  });
  return Object.assign(stream, { text: () => Buffer.concat(chunks).toString('utf8') });
}

beforeEach(() => sagemaker.reset());
afterEach(() => sagemaker.reset());

describe('deploy', () => {
  it('sends exactly the model, endpoint configuration and endpoint requests, in that order', async () => {
    sagemaker.on(DescribeEndpointCommand).resolves({ EndpointStatus: 'InService' });
    await deploy(client(), OPTIONS, fakeIo());

    expect(sagemaker.calls().map((c) => c.args[0].constructor.name)).toEqual([
      'CreateModelCommand',
      'CreateEndpointConfigCommand',
      'CreateEndpointCommand',
      'DescribeEndpointCommand',
    ]);
    expect(sagemaker.commandCalls(CreateModelCommand)[0]!.args[0].input).toEqual({
      ModelName: 'kokoro-model',
      ExecutionRoleArn: ROLE,
      PrimaryContainer: {
        Image: IMAGE,
        ModelDataSource: {
          S3DataSource: {
            S3Uri: 's3://models/kokoro-82m/',
            S3DataType: 'S3Prefix',
            CompressionType: 'None',
          },
        },
        Environment: { KOKORO_DTYPE: 'fp16' },
      },
    });
    expect(sagemaker.commandCalls(CreateEndpointConfigCommand)[0]!.args[0].input).toEqual({
      EndpointConfigName: 'kokoro-config',
      ProductionVariants: [
        {
          VariantName: 'AllTraffic',
          ModelName: 'kokoro-model',
          InstanceType: 'ml.g5.xlarge',
          InitialInstanceCount: 1,
          InitialVariantWeight: 1,
          ContainerStartupHealthCheckTimeoutInSeconds: 600,
          ModelDataDownloadTimeoutInSeconds: 600,
          InferenceAmiVersion: 'al2023-ami-sagemaker-inference-gpu-4-1',
        },
      ],
    });
    expect(sagemaker.commandCalls(CreateEndpointCommand)[0]!.args[0].input).toEqual({
      EndpointName: 'kokoro',
      EndpointConfigName: 'kokoro-config',
    });
    expect(sagemaker.commandCalls(DescribeEndpointCommand)[0]!.args[0].input).toEqual({
      EndpointName: 'kokoro',
    });
  });

  it('waits through Creating until InService, printing status and elapsed time', async () => {
    sagemaker
      .on(DescribeEndpointCommand)
      .resolvesOnce({ EndpointStatus: 'Creating' })
      .resolvesOnce({ EndpointStatus: 'Creating' })
      .resolvesOnce({ EndpointStatus: 'Creating' })
      .resolves({ EndpointStatus: 'InService' });
    const io = fakeIo(30_000);
    await deploy(client(), OPTIONS, io);
    expect(sagemaker.commandCalls(DescribeEndpointCommand)).toHaveLength(4);
    expect(io.lines).toEqual([
      'created model kokoro-model',
      'created endpoint configuration kokoro-config',
      'creating endpoint kokoro (1 × ml.g5.xlarge)',
      'endpoint kokoro: Creating (0s)',
      'endpoint kokoro: Creating (30s)',
      'endpoint kokoro: Creating (1m00s)',
      'endpoint kokoro: InService (1m30s)',
      'endpoint kokoro is InService',
    ]);
  });

  it('surfaces the FailureReason of a Failed endpoint', async () => {
    sagemaker.on(DescribeEndpointCommand).resolvesOnce({ EndpointStatus: 'Creating' }).resolves({
      EndpointStatus: 'Failed',
      FailureReason:
        'The primary container for production variant AllTraffic did not pass the ping health check.',
    });
    const attempt = deploy(client(), OPTIONS, fakeIo());
    await expect(attempt).rejects.toThrow(DeployError);
    await expect(attempt).rejects.toThrow(/did not pass the ping health check/);
    await expect(attempt).rejects.toThrow(/\/aws\/sagemaker\/Endpoints\/kokoro/);
  });

  it('tolerates a Describe that does not see the new endpoint yet', async () => {
    sagemaker
      .on(DescribeEndpointCommand)
      .rejectsOnce(notFound('Could not find endpoint "kokoro".'))
      .resolves({ EndpointStatus: 'InService' });
    const io = fakeIo();
    await waitForEndpoint(client(), 'kokoro', io);
    expect(io.lines).toEqual(['endpoint kokoro: Pending (0s)', 'endpoint kokoro: InService (15s)']);
  });

  it('gives up waiting after the timeout, saying so', async () => {
    sagemaker.on(DescribeEndpointCommand).resolves({ EndpointStatus: 'Creating' });
    const io = { ...fakeIo(60_000), waitTimeoutMs: 5 * 60_000 };
    await expect(waitForEndpoint(client(), 'kokoro', io)).rejects.toThrow(
      /still Creating after 5m00s; stopped waiting/,
    );
  });

  it('points at destroy when a resource already exists', async () => {
    sagemaker
      .on(CreateModelCommand)
      .rejects(
        notFound('Cannot create already existing model "arn:aws:sagemaker:us-east-1:1:model/kokoro-model".'),
      );
    await expect(deploy(client(), OPTIONS, fakeIo())).rejects.toThrow(
      /already existing model.*npm run deploy -- destroy --name kokoro/,
    );
    expect(sagemaker.commandCalls(CreateEndpointConfigCommand)).toHaveLength(0);
  });
});

describe('destroy', () => {
  it('deletes the endpoint, then its configuration, then the model', async () => {
    const io = fakeIo();
    await destroy(client(), 'kokoro', io);
    expect(sagemaker.calls().map((c) => [c.args[0].constructor.name, c.args[0].input])).toEqual([
      ['DeleteEndpointCommand', { EndpointName: 'kokoro' }],
      ['DeleteEndpointConfigCommand', { EndpointConfigName: 'kokoro-config' }],
      ['DeleteModelCommand', { ModelName: 'kokoro-model' }],
    ]);
    expect(io.lines).toEqual([
      'deleted endpoint kokoro',
      'deleted endpoint configuration kokoro-config',
      'deleted model kokoro-model',
    ]);
  });

  it('skips what does not exist and still deletes the rest', async () => {
    sagemaker
      .on(DeleteEndpointCommand)
      .rejects(notFound('Could not find endpoint "arn:aws:sagemaker:us-east-1:1:endpoint/kokoro".'));
    sagemaker
      .on(DeleteEndpointConfigCommand)
      .rejects(
        notFound(
          'Could not find endpoint configuration "arn:aws:sagemaker:us-east-1:1:endpoint-config/kokoro-config".',
        ),
      );
    const io = fakeIo();
    await destroy(client(), 'kokoro', io);
    expect(sagemaker.commandCalls(DeleteModelCommand)).toHaveLength(1);
    expect(io.lines).toEqual([
      'endpoint kokoro does not exist; skipped',
      'endpoint configuration kokoro-config does not exist; skipped',
      'deleted model kokoro-model',
    ]);
  });

  it('stops on any other error', async () => {
    sagemaker.on(DeleteEndpointCommand).rejects(
      new SageMakerServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: {},
        message: 'not authorized to perform: sagemaker:DeleteEndpoint',
      }),
    );
    await expect(destroy(client(), 'kokoro', fakeIo())).rejects.toThrow(/not authorized/);
    expect(sagemaker.commandCalls(DeleteEndpointConfigCommand)).toHaveLength(0);
    expect(sagemaker.commandCalls(DeleteModelCommand)).toHaveLength(0);
  });
});

describe('isNotFound', () => {
  it('recognises the not-found answers and nothing else', () => {
    expect(isNotFound(notFound('Could not find model "arn:…".'))).toBe(true);
    expect(isNotFound(Object.assign(new Error('x'), { name: 'ResourceNotFound' }))).toBe(true);
    expect(isNotFound(notFound('1 validation error detected: Value at instanceType failed'))).toBe(false);
    expect(isNotFound('Could not find')).toBe(false);
  });
});

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
    const ami = (argv: string[]) => {
      const cli = parseCli(['deploy', ...FLAGS, ...argv]);
      return cli.help || cli.command !== 'deploy' ? 'n/a' : cli.options.amiVersion;
    };
    expect(ami(['--instance-type', 'ml.c7i.xlarge'])).toBeUndefined();
    expect(ami(['--instance-type', 'ml.g6.xlarge'])).toBe(GPU_AMI_VERSION);
    expect(ami(['--ami-version', 'none'])).toBeUndefined();
    expect(ami(['--ami-version', 'al2-ami-sagemaker-inference-gpu-2-1'])).toBe(
      'al2-ami-sagemaker-inference-gpu-2-1',
    );
  });

  it('sends a .tar.gz object as compressed model data', () => {
    const cli = parseCli(['deploy', ...FLAGS, '--model-s3', 's3://models/kokoro/model.tar.gz']);
    if (cli.help || cli.command !== 'deploy') throw new Error('expected deploy');
    expect(deployRequests(cli.options).model.PrimaryContainer?.ModelDataSource).toEqual({
      S3DataSource: {
        S3Uri: 's3://models/kokoro/model.tar.gz',
        S3DataType: 'S3Object',
        CompressionType: 'Gzip',
      },
    });
  });

  it('refuses what SageMaker would refuse, naming the flag', () => {
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
    ];
    for (const [argv, message] of bad) {
      expect(() => parseCli(argv), argv.join(' ')).toThrow(UsageError);
      expect(() => parseCli(argv), argv.join(' ')).toThrow(message);
    }
  });

  it('--dry-run prints every deploy request as JSON and calls nothing', async () => {
    const stdout = capture();
    const stderr = capture();
    const code = await main(['deploy', ...FLAGS, '--env', 'KOKORO_DTYPE=fp16', '--dry-run'], {
      env: {},
      stdout,
      stderr,
    });
    expect(code).toBe(0);
    expect(sagemaker.calls()).toHaveLength(0);
    const sections = stdout
      .text()
      .split(/^# /m)
      .filter(Boolean)
      .map((s) => {
        const [operation, ...rest] = s.split('\n');
        return { operation, body: rest.join('\n').trim() };
      });
    expect(sections.map((s) => s.operation)).toEqual([
      'CreateModel',
      'CreateEndpointConfig',
      'CreateEndpoint',
      'then DescribeEndpoint every 15 s until InService',
    ]);
    expect(JSON.parse(sections[0]!.body)).toMatchObject({
      ModelName: 'kokoro-model',
      PrimaryContainer: {
        // The prefix gets the trailing slash SageMaker wants for uncompressed model data.
        ModelDataSource: { S3DataSource: { S3Uri: 's3://models/kokoro-82m/', S3DataType: 'S3Prefix' } },
        Environment: { KOKORO_DTYPE: 'fp16' },
      },
    });
    expect(JSON.parse(sections[1]!.body).ProductionVariants[0].InstanceType).toBe('ml.g5.xlarge');
    expect(JSON.parse(sections[2]!.body)).toEqual({
      EndpointName: 'kokoro',
      EndpointConfigName: 'kokoro-config',
    });
    expect(stderr.text()).toBe('');
  });

  it('--dry-run prints the destroy requests and calls nothing', async () => {
    const stdout = capture();
    const code = await main(['destroy', '--name', 'kokoro', '--dry-run'], {
      env: {},
      stdout,
      stderr: capture(),
    });
    expect(code).toBe(0);
    expect(sagemaker.calls()).toHaveLength(0);
    expect(stdout.text()).toBe(
      [
        '# DeleteEndpoint',
        '{\n  "EndpointName": "kokoro"\n}',
        '# DeleteEndpointConfig',
        '{\n  "EndpointConfigName": "kokoro-config"\n}',
        '# DeleteModel',
        '{\n  "ModelName": "kokoro-model"\n}',
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
    const code = await main(['deploy', ...FLAGS], {
      env: { AWS_REGION: 'us-east-1' },
      stdout,
      stderr,
      createClient: (region) => {
        expect(region).toBe('us-east-1');
        return client();
      },
      run: { sleep: async () => {}, now: () => 0 },
    });
    expect(code).toBe(1);
    expect(stdout.text()).toContain('endpoint kokoro: Failed (0s)');
    expect(stderr.text()).toMatch(/^deploy: Endpoint kokoro is Failed: CannotStartContainerError/);
  });

  it('exits 2 with a pointer to --help on a usage error', async () => {
    const stderr = capture();
    expect(await main(['deploy', '--name', 'kokoro'], { env: {}, stdout: capture(), stderr })).toBe(2);
    expect(stderr.text()).toBe('deploy: --image is required for deploy.\nRun with --help for usage.\n');
    expect(sagemaker.calls()).toHaveLength(0);
  });
});
