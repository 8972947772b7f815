/**
 * How many terminal columns a text takes (as wcwidth counts them): a CJK, Hangul or full-width character and an emoji
 * shown as one take 2, a combining mark, a variation selector and the zero-width joiner none, the rest 1. Tables pad
 * by it, not by UTF-16 length: names the service holds may be `日本語` or `🚀` (`webhooks list`).
 */
const ZERO = /^(?:[\p{Mn}\p{Me}]|\u200d)$/u; // variation selectors are Mn
const WIDE = /^[\p{Emoji_Presentation}\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{20000}-\u{3fffd}]$/u;

export function displayWidth(text: string): number {
  let w = 0;
  for (const c of text) w += ZERO.test(c) ? 0 : WIDE.test(c) ? 2 : 1;
  return w;
}

/** `text` padded with spaces to `width` columns (displayWidth). */
export function padDisplay(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}
