/** Messages between the main thread and an encoder worker (structured clone; audio transferred). */
import type { AudioFormat } from '../../protocol/formats.ts';

export interface EncoderWorkerInit {
  readonly ffmpegPath: string;
  /** Tests only: an `open` with `crash` ends the worker thread. Never set in production. */
  readonly faultInjection?: boolean;
}

export type ToEncoder =
  | {
      readonly type: 'open';
      readonly id: number;
      readonly format: AudioFormat;
      readonly sampleRate: number;
      /** Tests only (see EncoderWorkerInit.faultInjection). */
      readonly crash?: true;
    }
  | { readonly type: 'push'; readonly id: number; readonly seq: number; readonly pcm: Int16Array }
  | { readonly type: 'end'; readonly id: number; readonly seq: number }
  | { readonly type: 'abort'; readonly id: number }
  /** Stop: kill helper processes (pre-spawned ffmpeg), then exit. */
  | { readonly type: 'shutdown' };

export type FromEncoder =
  | { readonly type: 'ready' }
  | { readonly type: 'data'; readonly id: number; readonly seq: number; readonly bytes: Uint8Array }
  | { readonly type: 'error'; readonly id: number; readonly seq: number; readonly message: string };
