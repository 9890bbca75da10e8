/** Italian: espeak-ng's `it`. */
import { espeakLanguage } from './espeak-language.ts';

export const ITALIAN = espeakLanguage({
  code: 'i',
  name: 'Italian',
  tag: 'it',
  plsTags: ['it'],
  espeakVoice: 'it',
  warmUp: [
    'Il treno parte domani alle otto; vuoi che prenoti due posti vicino al finestrino?',
    'Grazie per aver aspettato, ho trovato tre voli che corrispondono alle tue date e al tuo budget.',
  ],
});
