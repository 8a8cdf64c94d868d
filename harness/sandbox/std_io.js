// Local stand-in for https://deno.land/std@0.186.0/io/mod.ts, which DSPy's runner.js imports but
// only uses for `readLines`. deno.land is unreachable offline; the import map points the URL here.

/** Yield the lines of a Deno reader (e.g. Deno.stdin) without their "\n" or "\r\n" endings. Each read's text
 * is searched once and a line is joined once, when its end arrives, so a long line costs time in proportion to
 * its length (appending to one string and searching it all again after every read costs its square). */
export async function* readLines(reader) {
  const decoder = new TextDecoder();
  const chunk = new Uint8Array(64 * 1024);
  let parts = []; // the current line so far, one piece per read
  const line = (last) => {
    const text = parts.join("") + last;
    parts = [];
    return text.endsWith("\r") ? text.slice(0, -1) : text;
  };
  while (true) {
    const n = await reader.read(chunk);
    if (n === null) break;
    let text = decoder.decode(chunk.subarray(0, n), { stream: true });
    let index;
    while ((index = text.indexOf("\n")) >= 0) {
      yield line(text.slice(0, index));
      text = text.slice(index + 1);
    }
    if (text.length > 0) parts.push(text);
  }
  const rest = line(decoder.decode());
  if (rest.length > 0) yield rest;
}
