// Signs a sign-in-with-x challenge with the real @x402/extensions helpers (createSIWxPayload,
// encodeSIWxHeader) and a @solana/kit key-pair signer, as an x402 client would.
// usage: node siwx.mjs <requestURL> <clientSecretJSON>   (the 401 body JSON on stdin)
// Prints the SIGN-IN-WITH-X header value.
import fs from "node:fs";
import { createSIWxPayload, encodeSIWxHeader } from "@x402/extensions/sign-in-with-x";
import { createKeyPairSignerFromBytes } from "@solana/kit";

const [requestURL, secretJSON] = process.argv.slice(2);
const answer = JSON.parse(fs.readFileSync(0, "utf8"));
const ext = answer.extensions["sign-in-with-x"];
const chain = ext.supportedChains.find((c) => c.type === "ed25519");
const signer = await createKeyPairSignerFromBytes(new Uint8Array(JSON.parse(secretJSON)));
const payload = await createSIWxPayload({ ...ext.info, chainId: chain.chainId, type: chain.type }, signer, requestURL);
process.stdout.write(encodeSIWxHeader(payload));
