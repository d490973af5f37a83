/**
 * Where a binding's secrets go in its outgoing request. Each call hands its code the placeholder
 * `{{secret:NAME:<nonce>}}` with a nonce fresh for the call, and only placeholders carrying that
 * nonce are filled: a `{{secret:NAME}}` (or an earlier call's placeholder) that arrives as data —
 * an action's argument, a response — stays literal text. A secret goes only where its toolset
 * declared it may (`@secret NAME header body query path`; headers only by default), and is filled
 * for its place: JSON-escaped in a JSON body, percent-encoded in a URL or a form body; a header
 * that cannot carry the value is refused, never sent broken.
 */
import { AppError } from "../errors";
import { randomHex } from "../random-hex";
import type { HostFetchRequest } from "./host-fetch";

export const SECRET_PLACEMENTS = ["header", "body", "query", "path"] as const;
/** Where in a request a secret may go. */
export type SecretPlacement = (typeof SECRET_PLACEMENTS)[number];
/** Where a secret may go when its toolset does not say. */
export const DEFAULT_PLACEMENTS: readonly SecretPlacement[] = ["header"];

/** One call's secrets: the nonce its placeholders carry, the values, and where each may go. */
export interface CallSecrets {
  nonce: string;
  values: Readonly<Record<string, string>>;
  /** By secret name; a name left out may go in headers only. */
  placements?: Readonly<Record<string, readonly SecretPlacement[]>>;
}

export function newSecretNonce(): string {
  return randomHex(16);
}

/** The placeholder a call's code holds for the secret `name`. */
export function callPlaceholder(name: string, nonce: string): string {
  return `{{secret:${name}:${nonce}}}`;
}

const NAME = "([A-Za-z_][A-Za-z0-9_]*)";

/** This call's placeholders as written; with `encoded`, also percent-encoded (a URL, a form body). */
function placeholderPattern(nonce: string, encoded: boolean): RegExp {
  if (!encoded) return new RegExp(`\\{\\{secret:${NAME}:${nonce}\\}\\}`, "g");
  const open = "(?:\\{|%7B)";
  const close = "(?:\\}|%7D)";
  const colon = "(?::|%3A)";
  return new RegExp(`${open}${open}secret${colon}${NAME}${colon}${nonce}${close}${close}`, "gi");
}

/** Whether `text` holds a placeholder of this call, as written or percent-encoded. */
export function hasCallPlaceholder(text: string | undefined, nonce: string): boolean {
  return text !== undefined && placeholderPattern(nonce, true).test(text);
}

const PLACE_WORDS: Record<SecretPlacement, string> = {
  header: "a header",
  body: "the body",
  query: "the URL's query",
  path: "the URL's path",
};

function placeWords(places: readonly SecretPlacement[]): string {
  const words = places.map((p) => PLACE_WORDS[p]);
  return words.length <= 1 ? (words[0] ?? "nowhere") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}

type Fill = (name: string, value: string) => string;

function filler(
  call: CallSecrets,
  place: SecretPlacement,
  encode: (value: string, name: string) => string,
): Fill {
  return (name, value) => {
    const allowed = call.placements?.[name] ?? DEFAULT_PLACEMENTS;
    if (!allowed.includes(place)) {
      throw new AppError(
        "FORBIDDEN",
        `secret ${name} may go in ${placeWords(allowed)}; the toolset put it in ${PLACE_WORDS[place]} (declare it with \`@secret ${name} ${[...allowed, place].join(" ")}\` to allow that)`,
      );
    }
    return encode(value, name);
  };
}

function fillText(text: string, call: CallSecrets, encoded: boolean, fill: Fill): string {
  return text.replace(placeholderPattern(call.nonce, encoded), (_match, name: string) => {
    if (!Object.hasOwn(call.values, name)) {
      throw new AppError("BAD_INPUT", `unknown secret ${name}: set it for this toolset in the console`);
    }
    return fill(name, call.values[name] as string);
  });
}

/** Tab and printable ASCII: anything else a header would mangle or the request would refuse. */
const HEADER_SAFE = /^[\t\x20-\x7e]*$/;

function headerValue(value: string, name: string): string {
  if (!HEADER_SAFE.test(value)) {
    throw new AppError(
      "BAD_INPUT",
      `secret ${name} cannot go in a header: its value holds a line break, a control character or a non-ASCII character`,
    );
  }
  return value;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function isForm(headers: Readonly<Record<string, string>>): boolean {
  return Object.entries(headers).some(
    ([k, v]) => k.toLowerCase() === "content-type" && /application\/x-www-form-urlencoded/i.test(v),
  );
}

/**
 * The body with its placeholders filled. In a body that is JSON every placeholder sits inside a
 * string literal (`{{` is no JSON outside one), so the value goes in JSON-escaped and the body
 * stays JSON whose string holds exactly the value.
 */
function fillBody(body: string, headers: Readonly<Record<string, string>>, call: CallSecrets): string {
  if (isJson(body))
    return fillText(
      body,
      call,
      false,
      filler(call, "body", (v) => JSON.stringify(v).slice(1, -1)),
    );
  if (isForm(headers)) return fillText(body, call, true, filler(call, "body", encodeURIComponent));
  return fillText(
    body,
    call,
    false,
    filler(call, "body", (v) => v),
  );
}

/** The URL with its placeholders filled, percent-encoded, by where they sit (path or query). */
function fillUrl(url: string, call: CallSecrets): string {
  if (!hasCallPlaceholder(url, call.nonce)) return url;
  const scheme = url.indexOf("://");
  const pathStart = url.indexOf("/", scheme < 0 ? 0 : scheme + 3);
  const authority = url.slice(0, pathStart < 0 ? url.length : pathStart);
  if (pathStart < 0 || hasCallPlaceholder(authority, call.nonce)) {
    throw new AppError("BAD_INPUT", "a secret may not go in a URL's host");
  }
  const rest = url.slice(pathStart);
  const hash = rest.indexOf("#");
  const sent = hash < 0 ? rest : rest.slice(0, hash);
  if (hash >= 0 && hasCallPlaceholder(rest.slice(hash), call.nonce)) {
    throw new AppError("BAD_INPUT", "a secret may not go in a URL's fragment (it is never sent)");
  }
  const query = sent.indexOf("?");
  const path = query < 0 ? sent : sent.slice(0, query);
  const search = query < 0 ? "" : sent.slice(query);
  return (
    authority +
    fillText(path, call, true, filler(call, "path", encodeURIComponent)) +
    fillText(search, call, true, filler(call, "query", encodeURIComponent)) +
    (hash < 0 ? "" : rest.slice(hash))
  );
}

/** Whether the request carries any placeholder of this call. */
export function usesCallSecrets(request: HostFetchRequest, nonce: string): boolean {
  return (
    hasCallPlaceholder(request.url, nonce) ||
    Object.values(request.headers).some((v) => hasCallPlaceholder(v, nonce)) ||
    hasCallPlaceholder(request.body, nonce)
  );
}

/** The request as sent: this call's placeholders filled for their place, or an error naming the secret. */
export function fillCallSecrets(request: HostFetchRequest, call: CallSecrets): HostFetchRequest {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(request.headers)) {
    headers[k] = fillText(v, call, false, filler(call, "header", headerValue));
  }
  return {
    ...request,
    url: fillUrl(request.url, call),
    headers,
    ...(request.body !== undefined ? { body: fillBody(request.body, request.headers, call) } : {}),
  };
}
