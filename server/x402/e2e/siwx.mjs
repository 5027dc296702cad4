// Signs a sign-in-with-x challenge with the real @x402/extensions helpers (createSIWxPayload,
// encodeSIWxHeader) and a @solana/kit key-pair signer, as an x402 client would.
// usage: node siwx.mjs <requestURL> <clientSecretJSON> [relay]   (the 401 body JSON on stdin)
// With "relay", the payload is built from the same helpers (createSIWxMessage,
// signSolanaMessage) without the client's check that the challenge is bound to the URL it
// called: what a page on another site does when it shows a wallet a challenge it relays.
// Prints the SIGN-IN-WITH-X header value.
import fs from "node:fs";
import { createSIWxPayload, createSIWxMessage, encodeSIWxHeader, getSolanaAddress, signSolanaMessage } from "@x402/extensions/sign-in-with-x";
import { createKeyPairSignerFromBytes } from "@solana/kit";

const [requestURL, secretJSON, mode] = process.argv.slice(2);
const answer = JSON.parse(fs.readFileSync(0, "utf8"));
const ext = answer.extensions["sign-in-with-x"];
const chain = ext.supportedChains.find((c) => c.type === "ed25519");
const signer = await createKeyPairSignerFromBytes(new Uint8Array(JSON.parse(secretJSON)));
const info = { ...ext.info, chainId: chain.chainId, type: chain.type };
let payload;
if (mode === "relay") {
  const address = getSolanaAddress(signer);
  const signature = await signSolanaMessage(createSIWxMessage(info, address), signer);
  payload = { ...info, address, signature };
} else {
  payload = await createSIWxPayload(info, signer, requestURL);
}
process.stdout.write(encodeSIWxHeader(payload));
