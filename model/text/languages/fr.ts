/** French: espeak-ng's `fr` (the voice of fr-fr, which Kokoro's pipeline asks for). */
import { espeakLanguage } from './espeak-language.ts';

export const FRENCH = espeakLanguage({
  code: 'f',
  name: 'French',
  tag: 'fr-FR',
  plsTags: ['fr'],
  espeakVoice: 'fr',
  warmUp: [
    'Le train part demain à huit heures ; voulez-vous que je réserve deux places près de la fenêtre ?',
    "Merci d'avoir patienté, j'ai trouvé trois vols qui correspondent à vos dates et à votre budget.",
  ],
});
