// A small Solana JSON-RPC facade over LiteSVM (a real SVM with the SPL Token program), for the
// x402 end-to-end test. It listens on two loopback ports: "client" (for the x402 client) and
// "server" (for our service), so the test can take the server's RPC down on its own. A control
// endpoint (POST /control on the client port) sets up accounts and failure modes.
// Everything stays on 127.0.0.1.
import http from "node:http";
import { LiteSVM } from "litesvm";
import {
  address, getBase58Codec, getBase64Codec, getTransactionDecoder, getCompiledTransactionMessageDecoder, lamports,
} from "@solana/kit";

const TOKEN = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const b58 = getBase58Codec();
const b64 = getBase64Codec();
const svm = new LiteSVM();
let slot = 1n;
let serverDown = false;
const history = new Map(); // base58 signature -> record
const calls = [];

function ctx() { return { slot: Number(slot), apiVersion: "2.2.0" }; }

function decodeWire(bytes) {
  const tx = getTransactionDecoder().decode(bytes);
  const msg = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  const sig0 = bytes.slice(1, 65);
  return { tx, msg, sig: b58.decode(sig0), version: msg.version };
}

function accountJSON(acc) {
  if (!acc || !acc.exists) return null;
  return { data: [b64.decode(acc.data), "base64"], executable: acc.executable, lamports: Number(acc.lamports),
    owner: acc.programAddress, rentEpoch: 0, space: acc.data.length };
}

function tokenBalances(keys) {
  const out = [];
  keys.forEach((k, i) => {
    const a = svm.getAccount(address(k));
    if (!a.exists || a.programAddress !== TOKEN || a.data.length !== 165) return;
    const d = a.data;
    const mint = b58.decode(d.slice(0, 32));
    const owner = b58.decode(d.slice(32, 64));
    const amount = new DataView(d.buffer, d.byteOffset + 64, 8).getBigUint64(0, true);
    const m = svm.getAccount(address(mint));
    const decimals = m.exists && m.data.length >= 45 ? m.data[44] : 0;
    out.push({ accountIndex: i, mint, owner, programId: TOKEN,
      uiTokenAmount: { amount: amount.toString(), decimals, uiAmount: Number(amount) / 10 ** decimals, uiAmountString: String(Number(amount) / 10 ** decimals) } });
  });
  return out;
}

function errJSON(e) {
  if (e === undefined || e === null) return null;
  if (typeof e === "number") {
    const names = ["AccountInUse", "AccountLoadedTwice", "AccountNotFound", "ProgramAccountNotFound", "InsufficientFundsForFee",
      "InvalidAccountForFee", "AlreadyProcessed", "BlockhashNotFound", "CallChainTooDeep", "MissingSignatureForFee",
      "InvalidAccountIndex", "SignatureFailure"];
    return names[e] ?? `TransactionError${e}`;
  }
  if (typeof e.index === "number" && typeof e.err === "function") {
    const ie = e.err();
    if (ie && typeof ie.code === "number") return { InstructionError: [e.index, { Custom: ie.code }] };
    return { InstructionError: [e.index, String(ie)] };
  }
  return String(e);
}

// Race and delay hooks (set by control operations, used by the attack cases).
let drainAfterSimulate = null; // token account emptied after the server's next passing simulation
let drainBeforeSend = null; // token account emptied right before the next send lands
const confirmDelay = new Map(); // payer address -> ms its transactions' statuses stay unknown
const drainEvery = new Set(); // token accounts emptied right before every send that names them
const replyDelay = { sendTransaction: 0, simulateTransaction: 0 }; // ms the server's RPC answers wait
let delayedSent = 0;

function setAmount(account, amount) {
  const a = svm.getAccount(address(account));
  if (!a.exists) return;
  const d = new Uint8Array(a.data);
  d.set(u64le(amount), 64);
  svm.setAccount({ address: address(account), data: d, executable: a.executable, lamports: a.lamports, programAddress: a.programAddress, space: BigInt(d.length) });
}

function simulate(bytes, side) {
  const { tx } = decodeWire(bytes);
  const r = svm.simulateTransaction(tx);
  if (typeof r.err === "function") {
    return { err: errJSON(r.err()), logs: r.meta().logs(), unitsConsumed: Number(r.meta().computeUnitsConsumed()) };
  }
  if (side === "server" && drainAfterSimulate) { setAmount(drainAfterSimulate, 0); drainAfterSimulate = null; }
  return { err: null, logs: r.meta().logs(), unitsConsumed: Number(r.meta().computeUnitsConsumed()) };
}

function send(bytes) {
  const { tx, msg, sig, version } = decodeWire(bytes);
  const keys = msg.staticAccounts.map(String);
  if (drainBeforeSend) { setAmount(drainBeforeSend, 0); drainBeforeSend = null; }
  for (const k of keys) if (drainEvery.has(k)) setAmount(k, 0);
  // Account 1 is the client signer (the payer): its transactions may confirm late on purpose.
  const delay = confirmDelay.get(keys[1]) ?? 0;
  if (delay > 0) delayedSent++;
  const pre = keys.map((k) => Number(svm.getBalance(address(k)) ?? 0n));
  const preTok = tokenBalances(keys);
  const r = svm.sendTransaction(tx);
  const failed = typeof r.err === "function";
  if (failed && errJSON(r.err()) === "AlreadyProcessed") return sig;
  const post = keys.map((k) => Number(svm.getBalance(address(k)) ?? 0n));
  slot += 1n;
  history.set(sig, {
    slot: Number(slot), raw: bytes, version: version === "legacy" ? "legacy" : 0,
    err: failed ? errJSON(r.err()) : null,
    fee: pre[0] - post[0], pre, post, preTok, postTok: tokenBalances(keys),
    logs: (failed ? r.meta() : r).logs(), visibleAt: Date.now() + delay,
  });
  return sig;
}

let statusesHidden = false;

const methods = {
  getAccountInfo: ([addr]) => ({ context: ctx(), value: accountJSON(svm.getAccount(address(addr))) }),
  getBalance: ([addr]) => ({ context: ctx(), value: Number(svm.getBalance(address(addr)) ?? 0n) }),
  getLatestBlockhash: () => ({ context: ctx(), value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: Number(slot) + 150 } }),
  isBlockhashValid: ([h]) => ({ context: ctx(), value: h === svm.latestBlockhash() }),
  getBlockHeight: () => Number(slot),
  getSlot: () => Number(slot),
  simulateTransaction: ([s], side) => ({ context: ctx(), value: { ...simulate(new Uint8Array(b64.encode(s)), side), accounts: null, returnData: null } }),
  sendTransaction: ([s]) => send(new Uint8Array(b64.encode(s))),
  getSignatureStatuses: ([sigs]) => ({ context: ctx(), value: sigs.map((s) => {
    const h = statusesHidden ? undefined : history.get(s);
    if (!h || Date.now() < h.visibleAt) return null;
    return { slot: h.slot, confirmations: null, err: h.err, confirmationStatus: "finalized", status: h.err ? { Err: h.err } : { Ok: null } };
  }) }),
  getTransaction: ([s, opts]) => {
    const h = history.get(s);
    if (!h || Date.now() < h.visibleAt) return null;
    if (h.version === 0 && (opts?.maxSupportedTransactionVersion === undefined)) {
      const e = new Error("Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: \"maxSupportedTransactionVersion\": 0");
      e.code = -32015;
      throw e;
    }
    return { slot: h.slot, blockTime: Math.floor(Date.now() / 1000), version: h.version,
      transaction: [b64.decode(h.raw), "base64"],
      meta: { err: h.err, status: h.err ? { Err: h.err } : { Ok: null }, fee: h.fee, preBalances: h.pre, postBalances: h.post,
        preTokenBalances: h.preTok, postTokenBalances: h.postTok, innerInstructions: [], logMessages: h.logs,
        loadedAddresses: { writable: [], readonly: [] }, rewards: [], computeUnitsConsumed: 0 } };
  },
};

function u64le(v) { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(v), true); return b; }

// Control operations (test setup only).
const control = {
  airdrop: ({ address: a, lamports: l }) => { svm.airdrop(address(a), lamports(BigInt(l))); return true; },
  // A classic-Token mint with 6 decimals and no authority, at any address.
  createMint: ({ mint, decimals }) => {
    const d = new Uint8Array(82);
    d.set(u64le(1_000_000_000_000n), 36); d[44] = decimals ?? 6; d[45] = 1;
    svm.setAccount({ address: address(mint), data: d, executable: false, lamports: lamports(svm.minimumBalanceForRentExemption(82n)), programAddress: address(TOKEN), space: 82n });
    return true;
  },
  // A token account (at its ATA address, computed by the caller) holding amount.
  setTokenAccount: ({ account, mint, owner, amount }) => {
    const d = new Uint8Array(165);
    d.set(b58.encode(mint), 0); d.set(b58.encode(owner), 32); d.set(u64le(amount), 64); d[108] = 1;
    svm.setAccount({ address: address(account), data: d, executable: false, lamports: lamports(svm.minimumBalanceForRentExemption(165n)), programAddress: address(TOKEN), space: 165n });
    return true;
  },
  tokenAmount: ({ account }) => {
    const a = svm.getAccount(address(account));
    if (!a.exists) return null;
    return new DataView(a.data.buffer, a.data.byteOffset + 64, 8).getBigUint64(0, true).toString();
  },
  balance: ({ address: a }) => Number(svm.getBalance(address(a)) ?? 0n),
  expireBlockhash: () => { svm.expireBlockhash(); slot += 200n; return svm.latestBlockhash(); },
  serverRPC: ({ up }) => { serverDown = !up; return true; },
  // Confirmation that outlasts the request: statuses read as unknown until shown again.
  hideStatuses: ({ hide }) => { statusesHidden = !!hide; return true; },
  calls: () => calls,
  // A transfer racing ours: the account is emptied after the server's next passing simulation.
  drainAfterSimulate: ({ account }) => { drainAfterSimulate = account; return true; },
  // A transfer landing first: the account is emptied right before the next send executes, so
  // the payment lands with an error and the fee payer pays its fee.
  drainBeforeSend: ({ account }) => { drainBeforeSend = account; return true; },
  // Confirmation held: statuses of this payer's transactions stay unknown for ms after sending.
  delayConfirmation: ({ payer, ms }) => { confirmDelay.set(payer, ms); return true; },
  delayedSent: () => delayedSent,
  // Every payment naming one of these token accounts loses the race: it is emptied right before
  // the send executes (many payers losing, the fee payer paying each failed landing).
  drainEvery: ({ accounts }) => { drainEvery.clear(); for (const a of accounts ?? []) drainEvery.add(a); return true; },
  // A slow RPC: the server's sendTransaction (or simulateTransaction) answer waits ms; the
  // transaction itself executes at once (money moves while the answer is late).
  delayReply: ({ method, ms }) => { replyDelay[method] = ms; return true; },
};

function handler(side) {
  return (req, res) => {
    if (side === "server" && serverDown) { req.socket.destroy(); return; }
    let body = "";
    req.on("data", (c) => { body += c; });
    req.on("end", () => {
      const reply = (obj) => { res.writeHead(200, { "content-type": "application/json" }); res.end(JSON.stringify(obj)); };
      let msg;
      try { msg = JSON.parse(body); } catch { return reply({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } }); }
      if (req.url === "/control") {
        try { return reply({ ok: true, result: control[msg.op](msg) }); } catch (e) { return reply({ ok: false, error: String(e) }); }
      }
      calls.push(`${side}:${msg.method}`);
      const fn = methods[msg.method];
      if (!fn) return reply({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "Method not found" } });
      try {
        const out = { jsonrpc: "2.0", id: msg.id, result: fn(msg.params ?? [], side) };
        const wait = side === "server" ? replyDelay[msg.method] ?? 0 : 0;
        if (wait > 0) return void setTimeout(() => reply(out), wait);
        reply(out);
      } catch (e) {
        reply({ jsonrpc: "2.0", id: msg.id, error: { code: e.code ?? -32603, message: String(e.message ?? e) } });
      }
    });
  };
}

const clientSrv = http.createServer(handler("client"));
const serverSrv = http.createServer(handler("server"));
clientSrv.listen(0, "127.0.0.1", () => serverSrv.listen(0, "127.0.0.1", () => {
  console.log(JSON.stringify({ client: `http://127.0.0.1:${clientSrv.address().port}`, server: `http://127.0.0.1:${serverSrv.address().port}` }));
}));
process.stdin.on("end", () => process.exit(0)); // exit when the test driver goes away
process.stdin.resume();
