/** Joining pieces of bytes: audio frames, payload parts, codec output. */

/** One array with the bytes of every piece, in order (the piece itself when there is only one). */
export function concatBytes(pieces: readonly Uint8Array[]): Uint8Array {
  if (pieces.length === 1) return pieces[0]!;
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const piece of pieces) {
    out.set(piece, offset);
    offset += piece.byteLength;
  }
  return out;
}
