/**
 * Real receivers for the notification tests: an HTTP server that records every request (and
 * can answer from a script), an SMTP server (smtp-server) that keeps each message, and the
 * browser's side of Web Push: a subscription's keys and RFC 8291 (aes128gcm) decryption.
 */
import { createDecipheriv, createECDH, createHmac, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

export interface HttpReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Decides each answer: a status, sent once `until` settles (if given). Default 200 at once. */
  answer: (req: ReceivedRequest) => { status: number; until?: Promise<void> };
  close(): Promise<void>;
}

export async function startHttpReceiver(): Promise<HttpReceiver> {
  const receiver: HttpReceiver = {
    url: "",
    requests: [],
    answer: () => ({ status: 200 }),
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const got: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "/",
        headers: req.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      };
      receiver.requests.push(got);
      const { status, until } = receiver.answer(got);
      const reply = () =>
        res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "receiver failed");
      if (until) void until.then(reply);
      else reply();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return receiver;
}

export interface SmtpReceiver {
  url: string;
  messages: { from: string; to: string[]; raw: string }[];
  close(): Promise<void>;
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const messages: SmtpReceiver["messages"] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        callback();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** What a browser holds for one push subscription: its P-256 key pair and auth secret. */
export function browserPushKeys() {
  const ecdh = createECDH("prime256v1");
  const publicKey = ecdh.generateKeys();
  const auth = randomBytes(16);
  return {
    ecdh,
    keys: { p256dh: publicKey.toString("base64url"), auth: auth.toString("base64url") },
    publicKey,
    auth,
  };
}

function hmac(key: Buffer, data: Buffer): Buffer {
  return createHmac("sha256", key).update(data).digest();
}

/** RFC 8291 / RFC 8188 decryption of one aes128gcm push message, as the browser does it. */
export function decryptPush(body: Buffer, browser: ReturnType<typeof browserPushKeys>): string {
  const salt = body.subarray(0, 16);
  const idLength = body[20] ?? 0;
  const serverPublic = body.subarray(21, 21 + idLength);
  const ciphertext = body.subarray(21 + idLength);
  const shared = browser.ecdh.computeSecret(serverPublic);
  const prkKey = hmac(browser.auth, shared);
  const keyInfo = Buffer.concat([
    Buffer.from("WebPush: info\0"),
    browser.publicKey,
    serverPublic,
    Buffer.from([1]),
  ]);
  const ikm = hmac(prkKey, keyInfo);
  const prk = hmac(salt, ikm);
  const cek = hmac(prk, Buffer.from("Content-Encoding: aes128gcm\0\x01")).subarray(0, 16);
  const nonce = hmac(prk, Buffer.from("Content-Encoding: nonce\0\x01")).subarray(0, 12);
  const decipher = createDecipheriv("aes-128-gcm", cek, nonce);
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
  const padded = Buffer.concat([
    decipher.update(ciphertext.subarray(0, ciphertext.length - 16)),
    decipher.final(),
  ]);
  // The last record ends with the delimiter 0x02 followed by zero padding.
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end -= 1;
  if (padded[end] !== 2) throw new Error("push record has no final delimiter");
  return padded.subarray(0, end).toString("utf8");
}
