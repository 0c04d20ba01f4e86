#!/usr/bin/env node
// Certify one invoice with emcf-gateway, the way an ERP should (Node.js >= 18: built-in fetch,
// no npm package).
//
//   EMCF_URL=http://127.0.0.1:8080 EMCF_KEY=mcf_live_... node emcf-client.mjs [RN]
//
// EMCF_LANG: the language of the person who reads the ERP's messages, fr (the default) or en;
// errorDesc and warningDesc come in it (Accept-Language). Send your user's language, not "en".
//
// 1. POST /api/v1/Invoice with the invoice (rn from the command line, else a new unique one).
// 2. Retry the SAME body (same rn) only when the answer says so: 503 or 409 with Retry-After,
//    waiting Retry-After (longer if it repeats). No answer at all (gateway down, connection
//    cut, timeout): back off exponentially, but first ask GET /api/v1/Invoice/{rn} whether the
//    lost request was certified (200: it was; 404: it was not, send it again). Any other
//    answer is final (README, "Worth a retry?"). A 200 whose body cannot be read is a lost
//    answer too.
// 3. Print the security elements and the OK line (the result: store it), then save the QR
//    code (GET /api/v1/Invoice/{rn}/qr.svg). The gateway also serves the whole fiscal block
//    ready to print: receipt.html (A4 or 80 mm) and receipt.escpos (thermal printers), under
//    the same /api/v1/Invoice/{rn}/.
//
// Last line: OK rn=... codeDEFDGI=... counters="..." nim=... qrSvg=... (qrSvg: where the QR
// code is saved right after that line).
// Exit status: 0 certified, 1 refused (FAIL line), 2 usage, 3 gave up (run again, same rn),
// 4 certified but the QR code not saved (the OK line stands: do NOT certify again; fetch
// qr.svg later).

import { writeFileSync } from "node:fs";
import { join } from "node:path";

const URL_BASE = (process.env.EMCF_URL || "http://127.0.0.1:8080").replace(/\/+$/, "");
const KEY = process.env.EMCF_KEY || "";
const TIMEOUT_MS = Number(process.env.EMCF_TIMEOUT || "60") * 1000; // one HTTP exchange
const MAX_TRIES = Number(process.env.EMCF_MAX_TRIES || "8");
const MAX_WAIT = 60; // seconds, never longer between two tries
const OUT_DIR = process.env.EMCF_OUT || ".";
// The language the ERP's user reads: errorDesc and warningDesc come in it. French by default.
const LANG = (process.env.EMCF_LANG || "").trim() || "fr";

class NoAnswer extends Error {} // refused, cut or timed out: no HTTP answer
class Refused extends Error {} // a final answer: retrying cannot help
class GaveUp extends Error {}

// Two pens at 600.00 CDF, tax group B, prices including tax, paid in cash. Amounts are always
// in CDF, also for a USD invoice (curCode USD, curRate = CDF per USD): convert USD prices first.
function invoice(rn) {
  return {
    rn,
    mode: "ttc",
    type: "FV",
    curCode: "CDF",
    curRate: "-1",
    items: [{ code: "LR 1515", name: "STYLO BIC", type: "BIE", price: "600.00", quantity: "2", taxGroup: "B" }],
    client: { nif: "A7654321C", type: "PM", name: "CLIENT SARL", contact: "+243 810 000 001", address: "Gombe, Kinshasa" },
    payments: [{ name: "ESPECES", amount: "1200.00", curCode: "CDF", curRate: "-1" }],
    operator: { id: "1", name: "Caisse 1" },
  };
}

// One HTTP exchange: { status, headers, text }. Throws NoAnswer when no answer came.
async function call(method, path, body) {
  const headers = { Authorization: `Bearer ${KEY}`, "Accept-Language": LANG };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  try {
    const response = await fetch(URL_BASE + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    return { status: response.status, headers: response.headers, bytes };
  } catch (error) {
    throw new NoAnswer(error.cause?.code || error.name || String(error));
  }
}

function asJson(bytes) {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch {
    return {};
  }
}

function retryAfter(headers) {
  const value = headers.get("retry-after");
  const seconds = value === null ? NaN : Number(value);
  return Number.isFinite(seconds) ? Math.max(0, seconds) : null;
}

// 1, 2, 4, 8... seconds, capped, with jitter so that tills do not retry together.
const backoff = (tries) => Math.min(MAX_WAIT, 2 ** (tries - 1)) * (0.8 + Math.random() * 0.4);

const log = (text) => process.stderr.write(`${text}\n`);

async function wait(seconds, why) {
  seconds = Math.min(seconds, MAX_WAIT);
  log(`${why}; retrying the same request in ${seconds.toFixed(1)} s`);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}

async function certify(body) {
  const path = `/api/v1/Invoice/${encodeURIComponent(body.rn)}`;
  let lost = null; // why the last answer was lost: look the rn up before sending it again
  for (let tries = 1; tries <= MAX_TRIES; tries++) {
    let answer;
    if (lost === null) {
      try {
        answer = await call("POST", "/api/v1/Invoice", body);
      } catch (error) {
        if (!(error instanceof NoAnswer)) throw error;
        lost = error.message;
      }
    }
    if (lost !== null) {
      // Sent or not? Ask by rn before sending it again (the gateway never certifies an rn
      // twice either way).
      log(`no answer (${lost}); asking GET ${path} (try ${tries}/${MAX_TRIES})`);
      lost = null;
      try {
        answer = await call("GET", path);
      } catch {
        await wait(backoff(tries), "the gateway does not answer");
        continue;
      }
      if (answer.status === 404) {
        log("not certified: sending it again");
        continue;
      }
    }
    const json = asJson(answer.bytes) ?? {};
    if (answer.status === 200) {
      if (typeof json.codeDEFDGI === "string" && json.codeDEFDGI) return json;
      lost = "a 200 whose body cannot be read"; // certified, surely: ask for the result
      continue;
    }
    const delay = retryAfter(answer.headers);
    if ((answer.status === 503 || answer.status === 409) && delay !== null) {
      // Worth a retry: the same request, after Retry-After (longer if it repeats).
      const why = `${answer.status} errorCode ${json.errorCode}: ${json.errorDesc}`;
      await wait(Math.max(delay, tries > 1 ? backoff(tries) : 0), why);
      continue;
    }
    throw new Refused(`status=${answer.status} errorCode=${json.errorCode} errorDesc=${JSON.stringify(json.errorDesc)}`);
  }
  throw new GaveUp(`no result after ${MAX_TRIES} tries: run again later with rn ${body.rn}`);
}

// The QR code to print, as SVG (receipt.html / receipt.escpos give the whole block).
async function saveQr(rn, path) {
  const answer = await call("GET", `/api/v1/Invoice/${encodeURIComponent(rn)}/qr.svg`);
  if (answer.status !== 200) throw new Refused(`qr.svg: status=${answer.status}`);
  writeFileSync(path, answer.bytes);
}

async function main() {
  if (!KEY) {
    log("set EMCF_KEY (and EMCF_URL): EMCF_KEY=mcf_live_... node emcf-client.mjs [RN]");
    return 2;
  }
  const rn = process.argv[2] || `JS-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  let result;
  try {
    result = await certify(invoice(rn));
  } catch (error) {
    if (error instanceof Refused || error instanceof GaveUp || error instanceof NoAnswer) {
      console.log(`FAIL rn=${rn} ${error.message}`);
      return error instanceof Refused ? 1 : 3;
    }
    throw error;
  }
  // Store these with the invoice and print them on it.
  for (const name of ["codeDEFDGI", "counters", "nim", "qrCode", "dateTime", "total", "vtotal"]) {
    console.log(`${name}: ${result[name]}`);
  }
  for (const warning of result.warnings || []) {
    // Certified all the same, but show it to a person (e.g. 301: USD amounts sent as CDF).
    console.log(`WARNING ${warning.warningCode}: ${warning.warningDesc}`);
  }
  const qrPath = join(OUT_DIR, `${rn.replace(/[^A-Za-z0-9_-]/g, "_")}-qr.svg`);
  console.log(`OK rn=${rn} codeDEFDGI=${result.codeDEFDGI} counters="${result.counters}" nim=${result.nim} qrSvg=${qrPath}`);
  // The invoice is certified whatever happens now: a QR code not saved is no refusal (never
  // certify it again under another rn); the same GET gives it later.
  try {
    await saveQr(rn, qrPath);
  } catch (error) {
    log(`WARNING rn=${rn} certified, QR code not saved (${error.message}): fetch GET /api/v1/Invoice/${rn}/qr.svg later`);
    return 4;
  }
  return 0;
}

process.exitCode = await main();
