// Local stand-in for https://deno.land/std@0.186.0/io/mod.ts, which DSPy's runner.js imports but
// only uses for `readLines`. deno.land is unreachable offline; the import map points the URL here.

/** Yield the lines of a Deno reader (e.g. Deno.stdin) without their "\n" or "\r\n" endings. */
export async function* readLines(reader) {
  const decoder = new TextDecoder();
  const chunk = new Uint8Array(64 * 1024);
  let pending = "";
  while (true) {
    const n = await reader.read(chunk);
    if (n === null) break;
    pending += decoder.decode(chunk.subarray(0, n), { stream: true });
    let index;
    while ((index = pending.indexOf("\n")) >= 0) {
      let line = pending.slice(0, index);
      if (line.endsWith("\r")) line = line.slice(0, -1);
      pending = pending.slice(index + 1);
      yield line;
    }
  }
  pending += decoder.decode();
  if (pending.length > 0) yield pending.endsWith("\r") ? pending.slice(0, -1) : pending;
}
