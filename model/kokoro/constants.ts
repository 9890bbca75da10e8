/**
 * Facts about Kokoro-82M v1.0 that the rest of the code relies on. Input and output *names* are not
 * here: they are read from the ONNX session (see inference/ort-session.ts), because the published
 * exports differ.
 */
import { NATIVE_SAMPLE_RATE } from '../../protocol/formats.ts';

/** Kokoro's only output rate: mono float32 at 24 kHz (the wire contract's native rate). */
export const SAMPLE_RATE = NATIVE_SAMPLE_RATE;

/** Width of one style vector (one row of a voice file). */
export const STYLE_DIM = 256;

/** Rows in a voice file: one style vector per possible phoneme count. */
export const VOICE_ROWS = 510;

/** Size of a voice file in bytes: 510 x 256 little-endian float32. */
export const VOICE_FILE_BYTES = VOICE_ROWS * STYLE_DIM * 4;

/** Phoneme ids per inference, before the two padding zeros are added. */
export const MAX_PHONEME_IDS = 510;

/**
 * Samples per predicted duration frame: the decoder turns each frame into 600 samples at 24 kHz
 * (40 a second), so a timestamped export's waveform is sum(durations) × 600 samples long.
 */
export const DURATION_FRAME_SAMPLES = 600;

/**
 * Kokoro's language codes: the first letter of a voice id (`a` American English, `b` British, `e`
 * Spanish, `f` French, `h` Hindi, `i` Italian, `j` Japanese, `p` Brazilian Portuguese, `z`
 * Mandarin). What each is called and how it is read is the text front end's (text/languages/).
 */
export type LanguageCode = VoiceId extends `${infer L}${string}` ? L : never;

/** Every voice published with Kokoro v1.0, by id. The first letter is the language. */
export const VOICE_IDS = [
  'af_alloy',
  'af_aoede',
  'af_bella',
  'af_heart',
  'af_jessica',
  'af_kore',
  'af_nicole',
  'af_nova',
  'af_river',
  'af_sarah',
  'af_sky',
  'am_adam',
  'am_echo',
  'am_eric',
  'am_fenrir',
  'am_liam',
  'am_michael',
  'am_onyx',
  'am_puck',
  'am_santa',
  'bf_alice',
  'bf_emma',
  'bf_isabella',
  'bf_lily',
  'bm_daniel',
  'bm_fable',
  'bm_george',
  'bm_lewis',
  'ef_dora',
  'em_alex',
  'em_santa',
  'ff_siwis',
  'hf_alpha',
  'hf_beta',
  'hm_omega',
  'hm_psi',
  'if_sara',
  'im_nicola',
  'jf_alpha',
  'jf_gongitsune',
  'jf_nezumi',
  'jf_tebukuro',
  'jm_kumo',
  'pf_dora',
  'pm_alex',
  'pm_santa',
  'zf_xiaobei',
  'zf_xiaoni',
  'zf_xiaoxiao',
  'zf_xiaoyi',
  'zm_yunjian',
  'zm_yunxi',
  'zm_yunxia',
  'zm_yunyang',
] as const;

export type VoiceId = (typeof VOICE_IDS)[number];

const VOICE_SET: ReadonlySet<string> = new Set(VOICE_IDS);

/** True when `id` is one of the published v1.0 voice ids (exact, case-sensitive). */
export function isVoiceId(id: string): id is VoiceId {
  return VOICE_SET.has(id);
}

/** The model file for each dtype in the onnx-community layout (`onnx/<file>`). */
export const DTYPE_FILES = {
  fp32: 'model.onnx',
  fp16: 'model_fp16.onnx',
  q8: 'model_quantized.onnx',
  q8f16: 'model_q8f16.onnx',
  q4: 'model_q4.onnx',
  q4f16: 'model_q4f16.onnx',
} as const;

export type Dtype = keyof typeof DTYPE_FILES;

/** The export loaded and fetched unless one is named (`KOKORO_DTYPE`'s default). */
export const DEFAULT_DTYPE: Dtype = 'fp32';
