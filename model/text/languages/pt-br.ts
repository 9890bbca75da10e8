/** Brazilian Portuguese: espeak-ng's `pt-br`. */
import { espeakLanguage } from './espeak-language.ts';

export const BRAZILIAN_PORTUGUESE = espeakLanguage({
  code: 'p',
  name: 'Brazilian Portuguese',
  tag: 'pt-BR',
  plsTags: ['pt-BR', 'pt'],
  espeakVoice: 'pt-br',
  warmUp: [
    'O trem sai amanhã às oito horas; você quer que eu reserve dois lugares perto da janela?',
    'Obrigado por esperar, encontrei três voos que combinam com as suas datas e o seu orçamento.',
  ],
});
