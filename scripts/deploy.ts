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
 * (`{"service":…,"operation":…,"input":…}`) and calls nothing.
 *
 * The requests and the calls are in lib/deploy-sagemaker.ts, the flags and the help in
 * lib/deploy-cli.ts; this file re-exports their pure parts for the tests, and the command line only
 * runs when it is the entry point.
 */
import { isMain } from './lib/cli.ts';
import { apiCallLine } from './lib/deploy-aws.ts';
import { parseCli, plannedRequests, helpText, type ParsedCli } from './lib/deploy-cli.ts';
import { createAwsClients, deploy, destroy, type AwsClients, type RunIo } from './lib/deploy-sagemaker.ts';
export { UsageError } from './lib/cli.ts';
export { isNotFound, type ApiCall } from './lib/deploy-aws.ts';
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
export * from './lib/deploy-cli.ts';
export * from './lib/deploy-sagemaker.ts';

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
