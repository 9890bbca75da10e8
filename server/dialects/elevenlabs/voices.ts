/** ElevenLabs' voice ids and output formats, as the server's. */
import { FORMATS } from '../../../protocol/formats.ts';
import { unsupported, vendorRate, type VendorOutput } from '../vendor-voices.ts';

/**
 * ElevenLabs' premade voices (their ids are public, in ElevenLabs' voice library and the SDKs'
 * examples), each mapped to the Kokoro voice nearest in accent and gender.
 */
export const ELEVENLABS_VOICES: Readonly<Record<string, string>> = {
  '21m00Tcm4TlvDq8ikWAM': 'af_heart', // Rachel: American, female
  EXAVITQu4vr4xnSDxMaL: 'af_sarah', // Sarah: American, female
  FGY2WhTYpPnrIDTdsKH5: 'af_nicole', // Laura: American, female
  cgSgspJ2msm6clMCkdW9: 'af_jessica', // Jessica: American, female
  XrExE9yKIg1WjnnlVkGX: 'af_bella', // Matilda: American, female
  hpp4J3VqNfWAUOO0d1Us: 'af_bella', // Bella: American, female (LiveKit's Python plugin default)
  SAz9YHcvj6GT2YYXdXww: 'af_river', // River: American
  pNInz6obpgDQGcFmaJgB: 'am_adam', // Adam: American, male
  TX3LPaxmHKxFdv7VOQHJ: 'am_liam', // Liam: American, male
  cjVigY5qzO86Huf0OWal: 'am_eric', // Eric: American, male
  nPczCjzI2devNBz1zQrb: 'am_michael', // Brian: American, male
  iP95p4xoKVk53GoZ742B: 'am_puck', // Chris: American, male
  bIHbv24MWmeRgasZH58o: 'am_echo', // Will: American, male (LiveKit's JS plugin default)
  CwhRBWXzGAHq8TQ4Fs17: 'am_onyx', // Roger: American, male
  JBFqnCBsd6RMkjVDRZzb: 'bm_george', // George: British, male
  onwK4e9ZLuTAKqWW03F9: 'bm_daniel', // Daniel: British, male
  N2lVS1w4EtoT3dr4eOWO: 'bm_lewis', // Callum: British, male
  IKne3meq5aSn9XLyUdCD: 'bm_fable', // Charlie: male
  Xb7hH8MSUJpSbSDYk0k2: 'bf_alice', // Alice: British, female
  pFZP5JQG7iQjIQuC4Bku: 'bf_lily', // Lily: British, female
};

/**
 * ElevenLabs' `output_format` (`pcm_24000`, `ulaw_8000`, `alaw_8000`, `mp3_44100_128`,
 * `opus_48000_64`): the codec and rate are honoured, a bitrate is taken as a hint (the encoders
 * choose their own). Every format ElevenLabs documents is served at its own rate.
 * @throws TtsError `invalid_option` for a format or rate the server cannot give (pcm_12000).
 */
export function elevenLabsOutput(value: string | undefined, fallback: string): VendorOutput {
  const named = value ?? fallback;
  const match = /^(pcm|ulaw|alaw|mp3|opus|wav)_(\d+)(?:_(\d+))?$/.exec(named);
  const codecs = { pcm: 'pcm', ulaw: 'mulaw', alaw: 'alaw', mp3: 'mp3', opus: 'opus', wav: 'wav' } as const;
  if (!match) {
    throw unsupported(
      `output_format ${JSON.stringify(named.slice(0, 40))} is not supported; use pcm_<rate> (${FORMATS.pcm.rates.join(', ')}), ulaw_8000, alaw_8000, mp3_<rate>_<bitrate> or opus_48000_<bitrate>`,
    );
  }
  const format = codecs[match[1] as keyof typeof codecs];
  return { format, sampleRate: vendorRate(format, Number(match[2]), named) };
}
