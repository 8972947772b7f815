/**
 * Standard input as the manifest stream `-` (`kustomize build overlays/prod | govops plan -`): read once, on
 * first use, whatever number of loads ask for it; refused over the stream limit.
 */
import type { ManifestStream } from '../manifests/loader.js';
import { MAX_STREAM_BYTES, STDIN_PATH } from '../manifests/stream.js';

let text: Promise<string> | undefined;

async function readAll(input: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buf.length;
    if (size > MAX_STREAM_BYTES) throw new Error(`standard input is larger than ${MAX_STREAM_BYTES} bytes`);
    chunks.push(buf);
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
}

/** The stream of standard input, when the paths name it (`-`); undefined otherwise (stdin is left alone). */
export function stdinStream(paths: readonly string[]): { stream?: ManifestStream } {
  if (!paths.includes(STDIN_PATH)) return {};
  return { stream: { read: () => (text ??= readAll(process.stdin)) } };
}
