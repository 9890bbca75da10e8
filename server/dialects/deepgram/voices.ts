/** Deepgram's models, each one voice, as the server's voices. */

/**
 * Deepgram's models (each one voice) that the frameworks send by default or Deepgram's examples
 * use: Aura on /v1/speak, Flux on /v2/speak.
 */
export const DEEPGRAM_VOICES: Readonly<Record<string, string>> = {
  'aura-2-andromeda-en': 'af_heart', // LiveKit's Deepgram plugin default (Python and JS): female, American
  'aura-2-helena-en': 'af_bella', // Pipecat's Deepgram default: female, American
  'aura-2-thalia-en': 'af_nova', // Deepgram's examples: female, American
  'aura-asteria-en': 'af_sarah', // Deepgram's first Aura default: female, American
  'flux-alexis-en': 'af_heart', // LiveKit's TTSv2 default: female, American
  'flux-heather-en': 'af_bella', // Pipecat's Flux default: female, American
  'flux-haley-en': 'af_nicole', // Deepgram's Flux examples: female, American
  'flux-cole-en': 'am_michael', // Deepgram's Flux voices: male, American
  'flux-jack-en': 'bm_george', // Deepgram's Flux voices: male, British
};
