/** Spanish: espeak-ng's `es`. */
import { espeakLanguage } from './espeak-language.ts';

export const SPANISH = espeakLanguage({
  code: 'e',
  name: 'Spanish',
  tag: 'es',
  plsTags: ['es'],
  espeakVoice: 'es',
  warmUp: [
    'El tren sale mañana a las ocho; ¿quieres que reserve dos asientos junto a la ventana?',
    'Gracias por esperar, encontré tres vuelos que coinciden con tus fechas y tu presupuesto.',
  ],
});
