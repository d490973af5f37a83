/**
 * What a notification says, built from approval rows at send time: the capability and its
 * category, who asked (key, client, owner), a short argument summary with secret-looking values
 * masked, when it expires, and the link that opens the card. The text follows the row's own
 * fields (its `kind`, when the row has one: an "uncertain" call asks to run again or end the
 * action), so a new kind of approval reads right without a change here. A message never carries
 * anything that approves by itself: the link only opens the card, behind sign-in.
 */

export type MessageKind = "request" | "reminder" | "test";

/** The fields of an approval row a message reads; other fields of the row are ignored. */
export interface ApprovalForMessage {
  id: string;
  capability: string;
  category: string;
  argsSnapshot: string;
  requestedBy: string;
  apiKeyId: string | null;
  expiresAt: Date;
  createdAt: Date;
  /** Present on rows of approval kinds beyond the ordinary call ("uncertain", ...). */
  kind?: unknown;
}

export interface Requester {
  keyName: string | null;
  clientName: string | null;
  ownerName: string | null;
}

export interface ApprovalBrief {
  id: string;
  kind: string;
  capability: string;
  category: string;
  requestedBy: string;
  key: string | null;
  client: string | null;
  owner: string | null;
  /** `title: "Q3 plan", body: "…" (2.1 KB)` — keys and short values, secrets masked. */
  argsSummary: string;
  expiresAt: string;
  url: string;
  /** One line: what is asked. */
  headline: string;
}

export interface NotificationMessage {
  kind: MessageKind;
  title: string;
  /** Plain text, a few lines. */
  body: string;
  /** The one-tap link: the card itself, or the queue for a group. */
  url: string;
  approvals: ApprovalBrief[];
}

const SECRET_KEY = /(pass(word)?|secret|token|api[-_]?key|auth|cookie|credential|private|session)/i;
const SECRET_VALUE =
  /^(bearer\s|basic\s|sk[-_]|pk[-_]live|ghp_|gho_|github_pat_|xox[abpr]-|AKIA|eyJ[A-Za-z0-9_-]{10,}\.)|-----BEGIN/i;
const MAX_VALUE = 40;
const MAX_KEYS = 4;

function looksSecret(value: string): boolean {
  if (SECRET_VALUE.test(value)) return true;
  // A long unbroken run of base64/hex is more likely a credential than prose.
  return (
    value.length >= 32 && /^[A-Za-z0-9+/=_-]+$/.test(value) && /\d/.test(value) && /[a-zA-Z]/.test(value)
  );
}

function summarizeValue(key: string, value: unknown): string {
  if (SECRET_KEY.test(key)) return "•••";
  if (typeof value === "string") {
    if (looksSecret(value)) return "•••";
    const flat = value.replace(/\s+/g, " ");
    return JSON.stringify(flat.length > MAX_VALUE ? `${flat.slice(0, MAX_VALUE - 1)}…` : flat);
  }
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  if (Array.isArray(value)) return `[${value.length} item${value.length === 1 ? "" : "s"}]`;
  return `{${Object.keys(value as object).length} keys}`;
}

/** A short, secret-free line about the arguments: never the whole snapshot. */
export function summarizeArgs(argsSnapshot: string): string {
  let args: unknown;
  try {
    args = JSON.parse(argsSnapshot);
  } catch {
    return "";
  }
  if (!args || typeof args !== "object" || Array.isArray(args)) return "";
  const entries = Object.entries(args as Record<string, unknown>);
  const shown = entries.slice(0, MAX_KEYS).map(([k, v]) => `${k}: ${summarizeValue(k, v)}`);
  if (entries.length > MAX_KEYS) shown.push(`+${entries.length - MAX_KEYS} more`);
  return shown.join(", ");
}

/** "in 4 min", "in 2 h", "in 3 days" (expired: "now"). */
export function expiresIn(expiresAt: Date, now: number): string {
  const ms = expiresAt.getTime() - now;
  if (ms <= 0) return "now";
  const min = Math.round(ms / 60_000);
  if (min < 1) return `in ${Math.max(1, Math.round(ms / 1000))} s`;
  if (min < 90) return `in ${min} min`;
  const hours = Math.round(min / 60);
  if (hours < 36) return `in ${hours} h`;
  return `in ${Math.round(hours / 24)} days`;
}

export function cardUrl(publicUrl: string, approvalId: string): string {
  return `${publicUrl}/approvals/${encodeURIComponent(approvalId)}`;
}

function approvalKind(row: ApprovalForMessage): string {
  return typeof row.kind === "string" && row.kind ? row.kind : "call";
}

function headline(row: ApprovalForMessage, kind: string): string {
  if (kind === "uncertain") {
    return `${row.capability} may already have run: run it again, or end the action?`;
  }
  if (kind === "call") return `${row.capability} (${row.category}) waits for approval`;
  return `${row.capability} (${row.category}) waits for a decision (${kind})`;
}

function who(row: ApprovalForMessage, r: Requester): string {
  const parts = [row.requestedBy];
  if (r.keyName && !row.requestedBy.includes(r.keyName)) parts.push(`key "${r.keyName}"`);
  if (r.clientName) parts.push(`client ${r.clientName}`);
  if (r.ownerName) parts.push(`owner ${r.ownerName}`);
  return parts.join(" · ");
}

export function briefOf(row: ApprovalForMessage, requester: Requester, publicUrl: string): ApprovalBrief {
  const kind = approvalKind(row);
  return {
    id: row.id,
    kind,
    capability: row.capability,
    category: row.category,
    requestedBy: row.requestedBy,
    key: requester.keyName,
    client: requester.clientName,
    owner: requester.ownerName,
    argsSummary: summarizeArgs(row.argsSnapshot),
    expiresAt: row.expiresAt.toISOString(),
    url: cardUrl(publicUrl, row.id),
    headline: headline(row, kind),
  };
}

function briefLines(
  brief: ApprovalBrief,
  row: ApprovalForMessage,
  requester: Requester,
  now: number,
): string[] {
  return [
    brief.headline,
    `Asked by ${who(row, requester)}`,
    ...(brief.argsSummary ? [`Arguments: ${brief.argsSummary}`] : []),
    `Expires ${expiresIn(row.expiresAt, now)} (${brief.expiresAt})`,
    `Open the card: ${brief.url}`,
  ];
}

export interface MessageInput {
  kind: MessageKind;
  rows: ReadonlyArray<{ row: ApprovalForMessage; requester: Requester }>;
  publicUrl: string;
  now: number;
}

export function buildMessage({ kind, rows, publicUrl, now }: MessageInput): NotificationMessage {
  if (kind === "test" || rows.length === 0) {
    return {
      kind,
      title: "ToolStore test notification",
      body: `This channel works. Approval requests will arrive here with a link to their card.\nOpen the queue: ${publicUrl}/approvals`,
      url: `${publicUrl}/approvals`,
      approvals: [],
    };
  }
  const briefs = rows.map(({ row, requester }) => briefOf(row, requester, publicUrl));
  const [first] = rows;
  if (rows.length === 1 && first && briefs[0]) {
    const brief = briefs[0];
    const prefix = kind === "reminder" ? `Reminder, expires ${expiresIn(first.row.expiresAt, now)}: ` : "";
    const title =
      brief.kind === "uncertain"
        ? `${prefix}Run again? ${brief.capability}`
        : `${prefix}Approve ${brief.capability} (${brief.category})?`;
    return {
      kind,
      title,
      body: briefLines(brief, first.row, first.requester, now).join("\n"),
      url: brief.url,
      approvals: briefs,
    };
  }
  const title =
    kind === "reminder"
      ? `Reminder: ${rows.length} approvals expire soon`
      : `${rows.length} approvals are waiting`;
  const body = rows
    .map(({ row, requester }, i) => briefLines(briefs[i] as ApprovalBrief, row, requester, now).join("\n"))
    .join("\n\n");
  return { kind, title, body, url: `${publicUrl}/approvals`, approvals: briefs };
}
