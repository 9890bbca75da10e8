/**
 * scripts/sagemaker-smoke.ts over a fake HTTP/2 client that answers like the container: the table,
 * the WAV files, the exit codes and the command line.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { wavName } from '../../../scripts/lib/smoke-checks.ts';
import { UsageError, formatTable, main, parseCliArgs } from '../../../scripts/sagemaker-smoke.ts';
import {
  FakeBidiClient,
  commandFactory,
  part,
  control,
  pcm,
  type Message,
} from '../client/sagemaker-fakes.ts';

describe('sagemaker-smoke script', () => {
  /** Answers like the container: start, audio in two frames, complete; closes on {"type":"close"}. */
  const serverLike =
    (failText?: string) =>
    (message: Message, self: FakeBidiClient): void => {
      if (message.type === 'close') {
        self.response.end();
        return;
      }
      const id = message.request_id;
      if (message.text === failText) {
        self.response.push(
          control({ type: 'error', request_id: id, code: 'inference_failed', message: 'the model failed' }),
        );
        return;
      }
      self.response.push(
        control({ type: 'synthesis_start', request_id: id }),
        part(pcm(1200, 1), 'BINARY'),
        part(pcm(1200, 2), 'BINARY'),
        control({ type: 'synthesis_complete', request_id: id, total_duration_s: 0.1, elapsed_s: 0.01 }),
      );
    };

  let out: string;
  beforeEach(async () => {
    out = await mkdtemp(join(tmpdir(), 'sm-smoke-'));
  });
  afterEach(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it('runs two sentences over one session: table, WAVs and the passed count', async () => {
    const fake = new FakeBidiClient(serverLike());
    const lines: string[] = [];
    const code = await main(
      [
        '--endpoint',
        'kokoro-ep',
        '--voice',
        'af_sky',
        '--out',
        out,
        '--text',
        'Hello there.',
        '--text',
        'Second one!',
      ],
      { client: fake, commandFactory, log: (line) => lines.push(line) },
    );
    const text = lines.join('\n');
    expect(code).toBe(0);
    expect(text).toContain('5 passed, 0 failed');
    expect(text).toMatch(/#\s+chars\s+bytes\s+audio s\s+server s\s+first audio ms\s+status/);
    expect(text).toMatch(/\n\s*1\s+12\s+4800\s+0\.10\s+0\.10\s+\d+\s+ok/);
    expect(text).toMatch(/\n\s*2\s+11\s+4800\s+0\.10\s+0\.10\s+\d+\s+ok/);
    expect(fake.messages.map((m) => m.text ?? m.type)).toEqual(['Hello there.', 'Second one!', 'close']);
    expect(fake.messages[0]).toMatchObject({ voice: 'af_sky' });
    expect(fake.parts.every((p) => p.DataType === 'BINARY')).toBe(true);

    const files = (await readdir(out)).sort();
    expect(files).toEqual(['01-hello-there.wav', '02-second-one.wav']);
    const wav = await readFile(join(out, files[0]!));
    expect(wav.length).toBe(44 + 4800);
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt16LE(22)).toBe(1); // mono
    expect(wav.readUInt32LE(24)).toBe(24000);
    expect(wav.readUInt16LE(34)).toBe(16);
    expect(wav.readUInt32LE(40)).toBe(4800);
    expect([...wav.subarray(44, 44 + 2400)]).toEqual([...pcm(1200, 1)]);
  });

  it('fails (exit 1) when a sentence gets an error frame, and still closes cleanly', async () => {
    const lines: string[] = [];
    const code = await main(['--endpoint', 'ep', '--out', out, '--text', 'Fine.', '--text', 'Broken.'], {
      client: new FakeBidiClient(serverLike('Broken.')),
      commandFactory,
      log: (line) => lines.push(line),
    });
    const text = lines.join('\n');
    expect(code).toBe(1);
    expect(text).toContain('4 passed, 1 failed');
    expect(text).toContain('sentence 2: error inference_failed: the model failed; no audio');
    expect(await readdir(out)).toEqual(['01-fine.wav']);
  });

  it('fails when the endpoint never answers, within the time limit', async () => {
    const lines: string[] = [];
    const code = await main(['--endpoint', 'ep', '--out', out, '--text', 'Hello.', '--timeout-ms', '200'], {
      client: new FakeBidiClient(),
      commandFactory,
      log: (line) => lines.push(line),
    });
    expect(code).toBe(1);
    expect(lines.join('\n')).toContain('1 sentence(s) unanswered before the time limit');
  });

  it('parses the command line', () => {
    expect(parseCliArgs(['--endpoint', 'ep', '--region', 'us-west-2'])).toMatchObject({
      endpoint: 'ep',
      region: 'us-west-2',
      voice: 'af_heart',
      timeoutMs: 120000,
    });
    expect(() => parseCliArgs([])).toThrow(UsageError);
    expect(() => parseCliArgs(['--endpoint', 'ep', '--bogus'])).toThrow(UsageError);
    expect(() => parseCliArgs(['--endpoint', 'ep', '--timeout-ms', '0'])).toThrow(
      /--timeout-ms should be a whole number of 1 or more/,
    );
    expect(parseCliArgs(['--help']).help).toBe(true);
    expect(wavName(0, 'Hello, World!')).toBe('01-hello-world.wav');
    expect(formatTable([]).split('\n')).toHaveLength(2);
  });

  it('exits 2 with the usage on bad options', async () => {
    const lines: string[] = [];
    expect(await main(['--region', 'x'], { log: (l) => lines.push(l) })).toBe(2);
    expect(lines.join('\n')).toContain('--endpoint NAME is required');
  });
});
