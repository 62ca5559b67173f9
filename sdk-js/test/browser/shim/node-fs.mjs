// node:fs for the browser run of the SDK's test files: readFileSync of a
// URL (Vite turns the tests' new URL(..., import.meta.url) into the URL of
// the built asset) by a synchronous request, text with an encoding and
// bytes without.

export function readFileSync(url, encoding) {
  const req = new XMLHttpRequest();
  req.open('GET', String(url), false);
  req.overrideMimeType('text/plain; charset=x-user-defined'); // bytes as they are
  req.send();
  if (req.status !== 200) throw new Error(`readFileSync ${url}: HTTP ${req.status}`);
  const raw = req.responseText;
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i) & 0xff;
  return encoding ? new TextDecoder(encoding === 'utf8' ? 'utf-8' : encoding).decode(bytes) : bytes;
}
