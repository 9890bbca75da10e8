/** Brazilian Portuguese: espeak-ng's `pt-br`. */
import { espeakLanguage } from './espeak-language.ts';

export const BRAZILIAN_PORTUGUESE = espeakLanguage({
  code: 'p',
  name: 'Brazilian Portuguese',
  tag: 'pt-BR',
  plsTags: ['pt-BR', 'pt'],
  espeakVoice: 'pt-br',
  // prettier-ignore
  numbers: {
    and: 'e', decimal: ',',
    currencies: {
      EUR: { unit: ['euro', 'euros'], cent: ['centavo', 'centavos'] },
      USD: { unit: ['dólar', 'dólares'], cent: ['centavo', 'centavos'] },
      GBP: { unit: ['libra', 'libras'], cent: ['centavo', 'centavos'] },
      JPY: { unit: ['iene', 'ienes'], cent: ['sen', 'sen'] },
      BRL: { unit: ['real', 'reais'], cent: ['centavo', 'centavos'] },
      INR: { unit: ['rupia', 'rupias'], cent: ['paisa', 'paisas'] },
    },
  },
  signs: { plus: 'mais', minus: 'menos' },
  corpus: 'pt-br',
  warmUp: [
    'O trem sai amanhã às oito horas; você quer que eu reserve dois lugares perto da janela?',
    'Obrigado por esperar, encontrei três voos que combinam com as suas datas e o seu orçamento.',
  ],
});
