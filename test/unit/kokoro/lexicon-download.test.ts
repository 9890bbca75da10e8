/**
 * fetchLexicon (model/kokoro/lexicon-download.ts) against a fake mirror serving misaki's real files.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEXICON_FILE_FACTS, fetchLexicon } from '../../../model/kokoro/lexicon-download.ts';
import {
  LEXICON_PATH,
  serveBytes,
  baseUrl,
  routes,
  requests,
  tmp,
  useFakeMirror,
  listFiles,
} from './download-mirror.ts';

useFakeMirror();

describe("misaki's lexicons", () => {
  it('fetches the four files, checks them, and keeps intact ones on the next run', async () => {
    const lines: string[] = [];
    const dir = path.join(tmp, 'misaki');
    const paths = await fetchLexicon({
      outDir: dir,
      baseUrl: `${baseUrl}/lexicon/`,
      log: (l) => lines.push(l),
    });
    expect(paths.map((p) => path.basename(p))).toEqual(LEXICON_FILE_FACTS.map((f) => f.name));
    for (const f of LEXICON_FILE_FACTS) expect((await stat(path.join(dir, f.name))).size).toBe(f.bytes);
    expect(requests.filter((u) => u.startsWith(LEXICON_PATH))).toHaveLength(4);
    await fetchLexicon({ outDir: dir, baseUrl: `${baseUrl}/lexicon`, log: (l) => lines.push(l) });
    expect(requests.filter((u) => u.startsWith(LEXICON_PATH))).toHaveLength(4);
    expect(lines.at(-1)).toBe('gb_silver.json: present, checked');
  });

  it("refuses a file that is not misaki's at the pinned commit, and keeps nothing of it", async () => {
    routes.set('lexicon:us_silver.json', serveBytes(Buffer.from(JSON.stringify({ hello: 'hˈɛlO' }))));
    const dir = path.join(tmp, 'misaki');
    await expect(fetchLexicon({ outDir: dir, baseUrl: `${baseUrl}/lexicon` })).rejects.toThrow(
      /us_silver\.json has the wrong size/,
    );
    expect(await listFiles(dir)).not.toContain('us_silver.json');
  });
});
