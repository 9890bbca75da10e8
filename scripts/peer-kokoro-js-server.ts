/**
 * A kokoro-js server (scripts/lib/peer-server.ts) as its own process, for `bench-peer`.
 *
 * Usage: node dist/scripts/peer-kokoro-js-server.js --model-dir DIR [--port N] [--host H]
 * (or PEER_MODEL_DIR and PORT in the environment). DIR is a folder written by
 * scripts/lib/peer-model.ts.
 */
import { UsageError, intFlag, parseFlags, runMain } from './lib/cli.ts';
import { buildPeerApp, loadPeerTts } from './lib/peer-server.ts';

const USAGE = `Usage: node dist/scripts/peer-kokoro-js-server.js --model-dir DIR [--port N] [--host H]

  --model-dir DIR   the kokoro-js model folder (default: $PEER_MODEL_DIR)
  --port N          port to listen on (default: $PORT, else 8081)
  --host H          address to listen on (default 127.0.0.1)
`;

async function main(): Promise<number> {
  let values, port;
  try {
    values = parseFlags(process.argv.slice(2), {
      'model-dir': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      help: { type: 'boolean', short: 'h', default: false },
    });
    port = intFlag('port', values.port ?? process.env.PORT, 8081, 1, 65_535);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const modelDir = values['model-dir'] ?? process.env.PEER_MODEL_DIR;
  if (!modelDir) {
    process.stderr.write(`--model-dir or PEER_MODEL_DIR is required\n\n${USAGE}`);
    return 2;
  }
  const app = buildPeerApp(await loadPeerTts(modelDir));
  await app.listen({ port, host: values.host });
  process.stderr.write(`kokoro-js server listening on http://${values.host}:${port}\n`);
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => resolve());
  });
  await app.close();
  return 0;
}

runMain(import.meta.url, 'peer-kokoro-js-server', main);
