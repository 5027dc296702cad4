// An MCP host as it is written everywhere: the official TypeScript SDK's Client over Streamable
// HTTP connects, lists the tools (which arms the SDK's output-schema validation), then calls
// them. The unpaid audit's PaymentRequired is paid with the real x402 client (@x402/core +
// @x402/svm) on the LiteSVM facade; every bazaar block is checked with @x402/extensions.
// usage: node host.mjs <serverURL> <clientRpcURL> <clientSecretJSON> <exportFile> <outDir>
// Prints one JSON object of outcomes for hosttest_test.go to assert on; writes the paid report's
// text (as the service sent it) to <outDir>/report.json for `scope-hygiene verify`.
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { x402Client } from "@x402/core/client";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec } from "@x402/extensions";
import { createKeyPairSignerFromBytes } from "@solana/kit";

const [serverURL, rpcURL, secretJSON, exportFile, outDir] = process.argv.slice(2);
const exportDoc = JSON.parse(fs.readFileSync(exportFile, "utf8"));
const signer = await createKeyPairSignerFromBytes(new Uint8Array(JSON.parse(secretJSON)));
const payer = new x402Client();
payer.register("solana:*", new ExactSvmScheme(signer, { rpcUrl: rpcURL }));

const out = {};
// step runs one host action; an exception (such as the SDK's -32602 "Structured content does
// not match the tool's output schema") is recorded as the outcome, never swallowed.
async function step(name, fn) {
  try {
    out[name] = await fn();
  } catch (e) {
    out[name] = { threw: `${e?.code ?? ""} ${e?.message ?? e}`.trim() };
  }
}
const bazaar = (ext) => {
  const v = validateDiscoveryExtension(ext);
  const s = validateDiscoveryExtensionSpec(ext);
  return { valid: v.valid, errors: v.errors ?? [], specValid: s.valid, specErrors: s.errors ?? [] };
};
const text = (res) => res.content?.[0]?.text ?? null;
// keep saves a tool answer's text, which is the route's body as the service sent it, for the
// type check of the generated OpenAPI types (hosttest_test.go).
const keep = (name, res) => {
  if (!text(res)) return;
  fs.writeFileSync(path.join(outDir, `${name}.json`), text(res));
  fs.writeFileSync(path.join(outDir, `${name}.status`), String(res._meta?.["scope-hygiene/http-status"] ?? 200));
};

const client = new Client({ name: "scope-hygiene-hosttest", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(`${serverURL}/mcp`)));

await step("tools", async () => {
  const { tools } = await client.listTools();
  return tools.map((t) => ({ name: t.name, hasOutputSchema: !!t.outputSchema,
    invalidId: JSON.stringify([t.inputSchema, t.outputSchema]).includes(".invalid") }));
});
await step("criteria", async () => {
  const res = await client.callTool({ name: "criteria", arguments: {} });
  return { isError: !!res.isError, criteriaId: res.structuredContent?.criteria_id ?? null };
});
await step("precheck", async () => {
  const res = await client.callTool({ name: "precheck", arguments: { export: exportDoc } });
  keep("precheck", res);
  return { isError: !!res.isError, kind: res.structuredContent?.kind ?? null };
});
// A second pre-check within the free allowance's interval, and an export without records:
// refusals, each by its rule id.
await step("precheckAgain", async () => {
  const res = await client.callTool({ name: "precheck", arguments: { export: exportDoc } });
  return { isError: !!res.isError, rule: res.structuredContent?.rule ?? null };
});
await step("noRecords", async () => {
  const res = await client.callTool({ name: "audit", arguments: { export: { ...exportDoc, records: [] } } });
  keep("refusal", res);
  return { isError: !!res.isError, rule: res.structuredContent?.rule ?? null };
});

let required = null;
await step("unpaid", async () => {
  const res = await client.callTool({ name: "audit", arguments: { export: exportDoc } });
  required = res.structuredContent ?? null;
  const envelope = JSON.parse(text(res) ?? "{}")["x402/error"];
  return { isError: !!res.isError, x402Version: required?.x402Version ?? null, resource: required?.resource?.url ?? null,
    envelopeCode: envelope?.code ?? null, bazaar: required?.extensions?.bazaar ? bazaar(required.extensions.bazaar) : null };
});
await step("paid", async () => {
  if (!required) throw new Error("no PaymentRequired to pay");
  const payload = await payer.createPaymentPayload(required);
  const res = await client.callTool({ name: "audit", arguments: { export: exportDoc }, _meta: { "x402/payment": payload } });
  if (!res.isError) keep("report", res);
  const settle = res._meta?.["x402/payment-response"] ?? null;
  return { isError: !!res.isError, kind: res.structuredContent?.kind ?? null, settled: settle?.success ?? null,
    transaction: settle?.transaction ?? null, body: res.isError ? text(res) : null };
});

// The second rule set's tools, when the service serves it.
await step("forgetEnvelope", async () => {
  const log = JSON.parse(fs.readFileSync(path.join(path.dirname(exportFile), "mutation-log.json"), "utf8"));
  const pre = await client.callTool({ name: "forget_envelope_precheck", arguments: { export: log } });
  const bad = await client.callTool({ name: "forget_envelope_audit", arguments: { export: { format: "mutation-log", events: [] } } });
  const audit = await client.callTool({ name: "forget_envelope_audit", arguments: { export: log } });
  keep("fe-precheck", pre);
  keep("fe-refusal", bad);
  keep("fe-interval", audit); // within the pre-check's interval: a refusal by rule id
  return { precheck: pre.structuredContent?.kind ?? null, preError: !!pre.isError, refusalRule: bad.structuredContent?.rule ?? null, badError: !!bad.isError };
});

// The HTTP bazaar block: the PAYMENT-REQUIRED header of an unpaid POST /audit.
await step("httpBazaar", async () => {
  const res = await fetch(`${serverURL}/audit`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(exportDoc) });
  const pr = JSON.parse(Buffer.from(res.headers.get("payment-required") ?? "", "base64").toString("utf8") || "{}");
  fs.writeFileSync(path.join(outDir, "payment-required.json"), await res.text());
  fs.writeFileSync(path.join(outDir, "payment-required.status"), String(res.status));
  return { status: res.status, bazaar: pr.extensions?.bazaar ? bazaar(pr.extensions.bazaar) : null };
});

await client.close();
console.log(JSON.stringify(out));
