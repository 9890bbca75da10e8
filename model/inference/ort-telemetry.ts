/**
 * ONNX Runtime's telemetry, kept off. Official Linux builds since 1.29 carry Microsoft's 1DS
 * uploader (microsoft/onnxruntime#27379): process, session, model, provider and error events, a
 * persistent device id and an offline cache, sent over HTTPS to mobile.events.data.microsoft.com,
 * on by default. The runtime reads one switch, `ORT_DISABLE_TELEMETRY`, with getenv() once, when
 * its environment is first created (core/platform/telemetry_environment.h), and latches it.
 *
 * So the switch must be in the process's real environment before the first session exists. In the
 * main thread an assignment to `process.env` is a real setenv(); in a worker thread it only changes
 * that thread's copy, so the main thread sets it before any worker starts (engine.ts), and this
 * module, imported by ort-session.ts ahead of onnxruntime-node, sets it again for a process that
 * loads the runtime in its main thread (the GPU check) and for the worker's own view.
 */

/** ONNX Runtime's own opt-out switch. */
export const ORT_TELEMETRY_SWITCH = 'ORT_DISABLE_TELEMETRY';
/** Our explicit opt-in: only `KOKORO_ORT_TELEMETRY=true` leaves ONNX Runtime's telemetry alone. */
export const ORT_TELEMETRY_OPT_IN = 'KOKORO_ORT_TELEMETRY';

type Env = Record<string, string | undefined>;

/** Whether ONNX Runtime reads `value` as "off" (trimmed, any case: 1, true, yes, on, y). */
export function switchesOff(value: string | undefined): boolean {
  return ['1', 'true', 'yes', 'on', 'y'].includes((value ?? '').trim().toLowerCase());
}

/** Whether `KOKORO_ORT_TELEMETRY` asks for ONNX Runtime's telemetry (true, 1, yes, on). */
export function optedIn(value: string | undefined): boolean {
  return ['1', 'true', 'yes', 'on'].includes((value ?? '').trim().toLowerCase());
}

/** `off`: the runtime will not start its uploader; `on`: the operator opted in (and did not also switch it off). */
export type OrtTelemetry = 'off' | 'on';

/**
 * Writes the switch into `env` unless the operator opted in, and says what the runtime will do.
 * With the opt-in, a switch the operator set themselves is left as it is (and wins).
 */
export function applyOrtTelemetry(optIn: boolean, env: Env = process.env): OrtTelemetry {
  if (!optIn) env[ORT_TELEMETRY_SWITCH] = '1';
  return switchesOff(env[ORT_TELEMETRY_SWITCH]) ? 'off' : 'on';
}

// Imported for its effect before onnxruntime-node: whoever loads the runtime, it starts with the
// switch set unless the opt-in is in this thread's environment.
applyOrtTelemetry(optedIn(process.env[ORT_TELEMETRY_OPT_IN]));
