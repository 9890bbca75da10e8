/**
 * The wire contract, as code: request fields, audio formats, control frames and the rule that
 * tells them from audio, SSE events, error codes. Pure: no I/O, no Node-only API, so the server,
 * the client (browsers included) and the scripts all import it. docs/protocol.md is its prose.
 */
export * from './bytes.ts';
export * from './errors.ts';
export * from './formats.ts';
export * from './frames.ts';
export * from './openai.ts';
export * from './request.ts';
export * from './sse.ts';
