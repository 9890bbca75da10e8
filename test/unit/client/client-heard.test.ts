/**
 * The client package as built (`kokoro-stream-client`): what a cancel's answer says was heard
 * (`heard` on the `cancelled` event and on what cancel() resolves with), and the split of a
 * contexts-mode audio frame, each against the frames the server's own dialect writes.
 */
import { describe, expect, it } from 'vitest';
import { splitContextFrame, type TtsCancelledEvent, type TtsEvent } from 'kokoro-stream-client';
import { SageMakerTtsSession } from 'kokoro-stream-client/sagemaker';
import type { Heard } from '../../../protocol/frames.ts';
import type { OutgoingFrame } from '../../../server/dialects/dialect.ts';
import { contextAudioFrame, nativeDialect } from '../../../server/dialects/native/messages.ts';
import {
  FakeBidiClient,
  collect,
  commandFactory,
  control,
  pcm,
  utf8,
  type Message,
} from './sagemaker-fakes.ts';

const HEARD: Heard = {
  request_id: 'r1',
  samples: 52800,
  sample_rate: 24000,
  ms: 2200,
  words: [
    { word: 'Sure,', start_s: 0, end_s: 0.41, char_start: 0, char_end: 5 },
    { word: 'let', start_s: 0.41, end_s: 0.6 },
  ],
};

/** The server's answer to a cancel (its own dialect) → the event the client makes of it. */
const CANCEL_ANSWERS = new Map<string, { frame: object; event: TtsCancelledEvent }>([
  [
    'a cut with words',
    {
      frame: nativeDialect().cancelled(undefined, ['r1', 'r2'], HEARD)!,
      event: {
        type: 'cancelled',
        cancelled: ['r1', 'r2'],
        heard: {
          requestId: 'r1',
          samples: 52800,
          sampleRate: 24000,
          ms: 2200,
          words: [
            { word: 'Sure,', startS: 0, endS: 0.41, charStart: 0, charEnd: 5 },
            { word: 'let', startS: 0.41, endS: 0.6 },
          ],
        },
      },
    },
  ],
  [
    'a cut by a model that cannot time words',
    {
      frame: nativeDialect().cancelled('r1', ['r1'], {
        request_id: 'r1',
        samples: 80,
        sample_rate: 8000,
        ms: 10,
      })!,
      event: {
        type: 'cancelled',
        requestId: 'r1',
        cancelled: ['r1'],
        heard: { requestId: 'r1', samples: 80, sampleRate: 8000, ms: 10 },
      },
    },
  ],
  [
    'nothing in flight',
    {
      frame: nativeDialect().cancelled(undefined, ['queued'], undefined)!,
      event: { type: 'cancelled', cancelled: ['queued'] },
    },
  ],
  [
    'a heard that is not an object',
    {
      frame: { type: 'synthesis_cancelled', cancelled: [], heard: 'all of it' },
      event: { type: 'cancelled', cancelled: [] },
    },
  ],
]);

describe('heard: the answer to a cancel (the built package)', () => {
  for (const [name, { frame, event }] of CANCEL_ANSWERS) {
    it(`${name}: cancel() resolves with it and events() delivers it`, async () => {
      const fake = new FakeBidiClient((message: Message, self) => {
        if (message.type === 'cancel') self.response.push(control(frame as Message));
        if (message.type === 'close') self.response.end();
      });
      const session = await SageMakerTtsSession.connect({ endpointName: 'ep', client: fake, commandFactory });
      const events = collect<TtsEvent>(session.events());
      expect(await session.cancel()).toEqual(event);
      await session.close();
      expect(await events).toEqual([event, { type: 'closed', reason: 'closed' }]);
    });
  }

  it('cancel() resolves with what was heard of the request it cut, which rejects as cancelled', async () => {
    const fake = new FakeBidiClient((message: Message, self) => {
      if (message.type === 'cancel') {
        self.response.push(
          control(nativeDialect().cancelled(undefined, ['r1'], { ...HEARD, words: [] }) as Message),
        );
      }
      if (message.type === 'close') self.response.end();
    });
    const session = await SageMakerTtsSession.connect({ endpointName: 'ep', client: fake, commandFactory });
    const events = collect<TtsEvent>(session.events());
    const collected = session.request('Sure, let me check.', { request_id: 'r1' });
    fake.response.push(control({ type: 'synthesis_start', request_id: 'r1' }), {
      PayloadPart: { Bytes: pcm(4, 1), DataType: 'BINARY' },
    });
    const answer = await session.cancel();
    expect(answer.heard).toEqual({ requestId: 'r1', samples: 52800, sampleRate: 24000, ms: 2200, words: [] });
    await expect(collected).rejects.toMatchObject({
      name: 'TtsRequestError',
      code: 'cancelled',
      requestId: 'r1',
    });
    await session.close();
    expect((await events).map((e) => e.type)).toEqual(['cancelled', 'closed']);
  });
});

describe('splitContextFrame: audio frames of a session with contexts', () => {
  const audio = pcm(6, 3);
  // A context id → the bytes the server puts in front of the audio.
  const IDS = new Map<string, number[]>([
    ['turn-1', [6, ...utf8.encode('turn-1')]],
    ['tür→1', [8, ...utf8.encode('tür→1')]],
    ['x'.repeat(255), [255, ...utf8.encode('x'.repeat(255))]],
  ]);

  for (const [contextId, prefix] of IDS) {
    it(`splits the server's frame for ${contextId.length > 20 ? 'a 255-byte id' : JSON.stringify(contextId)}`, () => {
      const { data: frame } = nativeDialect({ contexts: true }).audio(
        { requestId: 'r', context: contextId },
        audio,
        { startS: 0, endS: 0 },
      ) as OutgoingFrame;
      expect(frame).toBeInstanceOf(Uint8Array);
      expect([...(frame as Uint8Array).subarray(0, prefix.length)]).toEqual(prefix);
      const split = splitContextFrame(frame as Uint8Array);
      expect(split.contextId).toBe(contextId);
      expect(split.audio).toEqual(audio);
      // A view of the frame's bytes, not a copy.
      expect(split.audio.buffer).toBe((frame as Uint8Array).buffer);
    });
  }

  it('takes a frame with no audio after the id', () => {
    expect(splitContextFrame(contextAudioFrame('a', new Uint8Array(0)))).toEqual({
      contextId: 'a',
      audio: new Uint8Array(0),
    });
  });

  const BAD = new Map<string, [Uint8Array, RegExp]>([
    ['an empty frame', [new Uint8Array(0), /got 0 bytes, starting with nothing/]],
    ['an empty id', [new Uint8Array([0, 1, 2]), /starting with 0/]],
    ['a frame shorter than its id', [new Uint8Array([5, 0x61, 0x62]), /got 3 bytes, starting with 5/]],
  ]);
  for (const [name, [frame, message]] of BAD) {
    it(`refuses ${name} with a RangeError that says what it should be`, () => {
      expect(() => splitContextFrame(frame)).toThrow(RangeError);
      expect(() => splitContextFrame(frame)).toThrow(
        /should start with the context id's length \(1 to 255\)/,
      );
      expect(() => splitContextFrame(frame)).toThrow(message);
    });
  }

  it('refuses an id that is not UTF-8', () => {
    expect(() => splitContextFrame(new Uint8Array([2, 0xff, 0xfe, 1, 2]))).toThrow(TypeError);
  });
});
