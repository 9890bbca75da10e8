/** What the deploy tooling's AWS calls share: the dry-run record of a call, the not-found test, removal steps. */

/** The services the deploy tooling calls, named as `--dry-run` prints them. */
export type AwsService = 'sagemaker' | 'application-autoscaling' | 'cloudwatch';

/** One AWS API call: what `--dry-run` prints, one JSON line each. */
export interface ApiCall {
  readonly service: AwsService;
  /** The API operation (`CreateModel`, `PutScalingPolicy`, …). */
  readonly operation: string;
  readonly input: object;
}

/** One line of `--dry-run` output: `{"service":…,"operation":…,"input":{…}}`, keys in that order. */
export function apiCallLine(call: ApiCall): string {
  return JSON.stringify({ service: call.service, operation: call.operation, input: call.input });
}

/**
 * Whether an AWS error says the resource is missing. SageMaker answers a Describe/Delete of a
 * missing resource with a ValidationException saying "Could not find …" (some APIs use
 * ResourceNotFound); Application Auto Scaling uses ObjectNotFoundException; CloudWatch uses
 * ResourceNotFound.
 */
export function isNotFound(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (['ResourceNotFound', 'ResourceNotFoundException', 'ObjectNotFoundException'].includes(error.name)) {
    return true;
  }
  return error.name === 'ValidationException' && /could not find|does not exist/i.test(error.message);
}

/** One deletion of `destroy`: `run` sends it; `done` is the past tense printed on success. */
export interface RemovalStep {
  readonly what: string;
  readonly done: string;
  readonly run: () => Promise<unknown>;
}

/**
 * Runs the steps in order, printing each; a step whose resource is missing is skipped, so
 * `destroy` finishes a half-made or half-removed deployment. Any other error stops.
 */
export async function runRemovals(steps: readonly RemovalStep[], log: (line: string) => void): Promise<void> {
  for (const { what, done, run } of steps) {
    try {
      await run();
      log(`${done} ${what}`);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      log(`${what} does not exist; skipped`);
    }
  }
}
