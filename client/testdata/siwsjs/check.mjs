// Reads JSON lines {header, message?} on stdin; for each, parses the SIGN-IN-WITH-X header with
// the real @x402/extensions package, formats the SIWS message with it, and verifies the
// signature with it. Prints one JSON line per input: {message, verified, error}.
import readline from "node:readline";
import { parseSIWxHeader, formatSIWSMessage, verifySIWxSignature } from "@x402/extensions/sign-in-with-x";

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  const { header } = JSON.parse(line);
  try {
    const p = parseSIWxHeader(header);
    const message = formatSIWSMessage(p, p.address);
    const r = await verifySIWxSignature(p);
    console.log(JSON.stringify({ message, verified: r.isValid === true, payer: r.isValid ? r.payer : null, error: r.isValid ? null : r.invalidReason }));
  } catch (e) {
    console.log(JSON.stringify({ message: null, verified: false, error: String(e.message ?? e) }));
  }
}
