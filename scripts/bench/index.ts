/** Every benchmark case, in the order --list shows them. */
import type { Case } from '../lib/bench-runner.ts';
import { bargeIn } from './barge-in.ts';
import { capacity } from './capacity.ts';
import { contexts } from './contexts.ts';
import { firstAudio } from './first-audio.ts';
import { formats } from './formats.ts';
import { g2p } from './g2p.ts';
import { languages } from './languages.ts';
import { load } from './load.ts';
import { loaded } from './loaded.ts';
import { peer } from './peer.ts';

export const CASES: readonly Case[] = [
  firstAudio,
  load,
  bargeIn,
  contexts,
  peer,
  loaded,
  capacity,
  formats,
  languages,
  g2p,
];
