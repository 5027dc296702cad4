// The real x402 client (@x402/fetch + @x402/svm) paying the running scope-hygiene server.
// usage: node client.mjs <scenario> <serverURL> <clientRpcURL> <clientSecretJSON> <exportFile> [arg]
// Prints one JSON object with the HTTP outcomes for the Go test driver to assert on.
import fs from "node:fs";
import { wrapFetchWithPayment, x402Client, x402HTTPClient } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { createKeyPairSignerFromBytes } from "@solana/kit";

const [scenario, serverURL, rpcURL, secretJSON, exportFile, arg] = process.argv.slice(2);
const body = fs.readFileSync(exportFile);
const signer = await createKeyPairSignerFromBytes(new Uint8Array(JSON.parse(secretJSON)));
const scheme = new ExactSvmScheme(signer, { rpcUrl: rpcURL });
// The "mint" scenario makes the client pay in a non-default asset on purpose, so the client's own
// spend controls (which only allow known assets) are off there and only there.
const client = scenario === "mint"
  ? x402Client.fromConfig({ schemes: [{ network: "solana:*", client: scheme }], spendControls: false })
  : new x402Client();
if (scenario !== "mint") client.register("solana:*", scheme);
const httpClient = new x402HTTPClient(client);
const url = `${serverURL}/audit`;
const post = (headers = {}) => fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

function decode(h) { return h ? JSON.parse(Buffer.from(h, "base64").toString("utf8")) : null; }
async function outcome(res) {
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  return { status: res.status, paymentRequired: decode(res.headers.get("payment-required")),
    paymentResponse: decode(res.headers.get("payment-response")), expose: res.headers.get("access-control-expose-headers"),
    kind: json?.kind ?? json?.payload?.kind ?? null, error: json?.error ?? null,
    // Answers other than a report are static payment bodies, kept for the docs' real output.
    body: res.status === 200 ? null : text, retryAfter: res.headers.get("retry-after") };
}

// Build a payment header with the real client for the server's current 402; mutate lets a
// scenario change the requirements the client builds from, then restores `accepted`.
async function paymentHeader(mutate) {
  const first = await post();
  const pr = httpClient.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json().catch(() => ({})));
  const original = JSON.parse(JSON.stringify(pr.accepts[0]));
  if (mutate) mutate(pr.accepts[0]);
  const payload = await httpClient.createPaymentPayload(pr);
  payload.accepted = original;
  return { unpaid: first.status, headers: httpClient.encodePaymentSignatureHeader(payload) };
}

const out = { scenario };
switch (scenario) {
  case "happy": {
    const pay = wrapFetchWithPayment(fetch, client);
    out.paid = await outcome(await pay(url, { method: "POST", headers: { "content-type": "application/json" }, body }));
    break;
  }
  case "unpaid":
    out.first = await outcome(await post());
    break;
  case "replay": {
    const { headers } = await paymentHeader();
    out.first = await outcome(await post(headers));
    out.second = await outcome(await post(headers));
    break;
  }
  case "concurrent": {
    const { headers } = await paymentHeader();
    const rs = await Promise.all([post(headers), post(headers), post(headers)]);
    out.all = await Promise.all(rs.map(outcome));
    break;
  }
  case "many": { // arg distinct payments from one wallet, built first, then sent at once
    const hs = [];
    for (let i = 0; i < Number(arg); i++) hs.push((await paymentHeader()).headers);
    const rs = await Promise.all(hs.map((h) => post(h)));
    out.all = await Promise.all(rs.map(outcome));
    break;
  }
  case "expired": {
    const { headers } = await paymentHeader();
    await fetch(`${rpcURL}/control`, { method: "POST", body: JSON.stringify({ op: "expireBlockhash" }) });
    out.first = await outcome(await post(headers));
    break;
  }
  case "amount": {
    const { headers } = await paymentHeader((a) => { a.amount = "40000"; });
    out.first = await outcome(await post(headers));
    break;
  }
  case "mint": {
    const { headers } = await paymentHeader((a) => { a.asset = arg; });
    out.first = await outcome(await post(headers));
    break;
  }
  case "destination": {
    const { headers } = await paymentHeader((a) => { a.payTo = arg; });
    out.first = await outcome(await post(headers));
    break;
  }
  case "pay": { // plain payment with a prepared header (insufficient balance, RPC down)
    const { headers } = await paymentHeader();
    const sent = Date.now();
    out.first = await outcome(await post(headers));
    out.first.ms = Date.now() - sent; // the paid request alone, answer read in full
    out.header = headers["PAYMENT-SIGNATURE"];
    break;
  }
  case "resend": { // re-send a given header
    out.first = await outcome(await post({ "PAYMENT-SIGNATURE": arg }));
    break;
  }
  default:
    throw new Error("unknown scenario");
}
console.log(JSON.stringify(out));
