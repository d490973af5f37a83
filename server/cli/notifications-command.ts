/**
 * `notifications add-webhook <url> [--format json|slack|ntfy] [--secret S] [--name N]`,
 * `notifications add-email <address> --user <username>`, `notifications list`,
 * `notifications test <id>` (sends now and prints the receiver's answer) and
 * `notifications remove <id>`. Channels added here without `--user` are team channels: they hear
 * of every request. Web Push is turned on per device in the console.
 */
import { AppError } from "../core/errors";
import { loadEnv, publicUrl } from "../env";
import { auditLogFor, cliActor } from "../infra/audit-log";
import {
  addEmail,
  addWebhook,
  findChannel,
  listChannels,
  removeChannel,
} from "../services/notifications/channels";
import { sendTestNow } from "../services/notifications/notifier";
import { WEBHOOK_FORMATS, type WebhookFormat } from "../services/notifications/payloads";
import { type CliCommand, EXIT, parseSubcommandArgs, UsageError } from "./command";
import { openMigratedDb } from "./open-db";

const SUBCOMMANDS = ["add-webhook", "add-email", "list", "test", "remove"] as const;

const USAGE = `usage: npm run toolstore -- notifications add-webhook <url> [--format json|slack|ntfy] [--secret S] [--name N] [--user U]
       npm run toolstore -- notifications add-email <address> --user <username>
       npm run toolstore -- notifications list
       npm run toolstore -- notifications test <id>
       npm run toolstore -- notifications remove <id>

add-webhook  posts each approval request to <url>: generic JSON (signed with HMAC-SHA256 in
             X-ToolStore-Signature when --secret is set), a Slack incoming webhook, or an ntfy
             topic URL (https://ntfy.sh/<topic>; --secret is sent as its access token).
             Without --user it is a team channel told of every request.
add-email    mails the user's requests to <address> (needs TOOLSTORE_SMTP_URL).
list         channels with their health: last success, last error.
test         sends a test message now and prints what the receiver answered.
remove       deletes a channel (and its delivery records).
Web Push is turned on per device in the console: Settings → Notifications.`;

async function userIdOf(db: Awaited<ReturnType<typeof openMigratedDb>>, username: string | undefined) {
  if (!username) return null;
  const user = await db.user.findUnique({ where: { username }, select: { id: true } });
  if (!user) throw new AppError("NOT_FOUND", `no user "${username}": see the console's Users page`);
  return user.id;
}

function ago(date: Date | null): string {
  if (!date) return "never";
  const s = Math.round((Date.now() - date.getTime()) / 1000);
  return s < 90 ? `${s}s ago` : s < 5400 ? `${Math.round(s / 60)}m ago` : date.toISOString();
}

export const notificationsCommand: CliCommand = {
  name: "notifications",
  summary: "add, list, test or remove notification channels (webhooks, email)",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals, subcommand } = parseSubcommandArgs("notifications", args, SUBCOMMANDS, {
      format: { type: "string" },
      secret: { type: "string" },
      name: { type: "string" },
      user: { type: "string" },
    });
    const arg = positionals[1];
    if (subcommand !== "list" && !arg) throw new UsageError(`notifications ${subcommand} needs an argument`);
    const format = values.format as WebhookFormat | undefined;
    if (format && !WEBHOOK_FORMATS.includes(format)) {
      throw new UsageError(`--format must be one of ${WEBHOOK_FORMATS.join(", ")}, not "${format}"`);
    }
    const db = await openMigratedDb();
    try {
      const audit = auditLogFor(db);
      if (subcommand === "add-webhook" || subcommand === "add-email") {
        const userId = await userIdOf(db, values.user);
        if (subcommand === "add-email" && !userId) throw new UsageError("add-email needs --user <username>");
        const channel =
          subcommand === "add-webhook"
            ? await addWebhook(db, {
                url: arg as string,
                ...(format ? { format } : {}),
                secret: values.secret ?? null,
                ...(values.name ? { name: values.name } : {}),
                userId,
              })
            : await addEmail(db, { address: arg as string, userId: userId as string });
        await audit.append({
          actor: cliActor(),
          action: "notifications.add",
          target: `notification-channel:${channel.id}`,
          after: { kind: channel.kind, format: channel.format, name: channel.name, signed: channel.signed },
        });
        io.out(
          `added ${channel.kind} channel ${channel.id} (${channel.name})${channel.signed ? ", signed" : ""}`,
        );
        io.out(`send a test: npm run toolstore -- notifications test ${channel.id.slice(0, 10)}`);
        return EXIT.ok;
      }
      if (subcommand === "list") {
        const channels = await listChannels(db, { userId: null, all: true });
        if (channels.length === 0) {
          io.out(
            "no notification channels yet — add one: npm run toolstore -- notifications add-webhook <url>",
          );
          return EXIT.ok;
        }
        for (const c of channels) {
          const health = c.lastError
            ? `last error ${ago(c.lastErrorAt)}: ${c.lastError}`
            : `last sent ${ago(c.lastOkAt)}`;
          io.out(
            `${c.id}  ${c.kind}${c.format ? `/${c.format}` : ""}  ${c.name}  ${c.target}${c.enabled ? "" : "  (off)"}  ${health}`,
          );
        }
        return EXIT.ok;
      }
      const channel = await findChannel(db, arg as string);
      if (subcommand === "remove") {
        await removeChannel(db, channel.id);
        await audit.append({
          actor: cliActor(),
          action: "notifications.remove",
          target: `notification-channel:${channel.id}`,
          before: { kind: channel.kind, name: channel.name },
        });
        io.out(`removed ${channel.kind} channel ${channel.id}`);
        return EXIT.ok;
      }
      const env = loadEnv();
      const error = await sendTestNow(db, channel.id, {
        publicUrl: publicUrl(env),
        smtpUrl: env.TOOLSTORE_SMTP_URL ?? null,
        smtpFrom: env.TOOLSTORE_SMTP_FROM,
      });
      if (error) {
        io.err(`test to ${channel.name} failed: ${error}`);
        return EXIT.failed;
      }
      io.out(`test message sent to ${channel.name}`);
      return EXIT.ok;
    } finally {
      await db.$disconnect();
    }
  },
};
