// Offline stand-in for https://deno.land/std@0.186.0/io/mod.ts, of which dspy's runner.js uses only
// readLines. Mapped in by import_map.json, so the sandbox starts without reaching deno.land.
export async function* readLines(reader: { read(p: Uint8Array): Promise<number | null> }): AsyncIterableIterator<string> {
  const decoder = new TextDecoder();
  const chunk = new Uint8Array(64 * 1024);
  let buffer = "";
  while (true) {
    const n = await reader.read(chunk);
    if (n === null) break;
    buffer += decoder.decode(chunk.subarray(0, n), { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      yield line.endsWith("\r") ? line.slice(0, -1) : line;
    }
  }
  buffer += decoder.decode();
  if (buffer.length > 0) yield buffer;
}
