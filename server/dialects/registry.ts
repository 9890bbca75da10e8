/**
 * The wire dialects the app serves. The WebSocket route, the security hook and the app read this
 * list: a dialect is added by its folder and one entry here. The not-found answer lists their
 * routes in this order.
 */
import { cartesia } from './cartesia/index.ts';
import { deepgram } from './deepgram/index.ts';
import type { Dialect } from './dialect.ts';
import { elevenLabs } from './elevenlabs/index.ts';
import { native } from './native/index.ts';
import { openAi } from './openai/index.ts';

export const DIALECTS: readonly Dialect[] = [native, deepgram, openAi, elevenLabs, cartesia];
