/**
 * `secrets rotate-key [--new-key <base64>]`: re-seal every stored secret with a new key.
 * `secrets status`: where the key comes from and how many secrets are sealed.
 */
import { auditLogFor, cliActor } from "../infra/audit-log";
import { rotateSecretKey, sealedCount, secretBoxConfigFor, secretBoxFor } from "../services/stored-secrets";
import { type CliCommand, EXIT, parseSubcommandArgs } from "./command";
import { openMigratedDb } from "./open-db";

const USAGE = `usage: npm run toolstore -- secrets rotate-key [--new-key <32 bytes base64|hex>]
       npm run toolstore -- secrets status

rotate-key  re-encrypts every stored secret with a new key (random unless --new-key). With a key
            file it is replaced (the old key is kept as <file>.previous); with TOOLSTORE_SECRET_KEY
            the new key is printed: set it there before the next start.
status      prints the key's id and source and how many secrets are encrypted.`;

export const secretsCommand: CliCommand = {
  name: "secrets",
  summary: "rotate the key that encrypts stored secrets, or show its status",
  usage: USAGE,
  async run(args, io) {
    const { values, subcommand: sub } = parseSubcommandArgs("secrets", args, ["rotate-key", "status"], {
      "new-key": { type: "string" },
    });
    const db = await openMigratedDb();
    try {
      const config = secretBoxConfigFor(db);
      if (sub === "status") {
        const box = await secretBoxFor(db, config);
        const sealed = await sealedCount(db);
        io.out(
          `key ${box.keyId} from ${config.envKey ? "TOOLSTORE_SECRET_KEY" : config.keyFile}; ${sealed} secret(s) encrypted`,
        );
        return EXIT.ok;
      }
      const result = await rotateSecretKey(db, config, values["new-key"]);
      await auditLogFor(db).append({
        actor: cliActor(),
        action: "secrets.rotateKey",
        target: "secret-key",
        before: { keyId: result.oldKeyId },
        after: { keyId: result.newKeyId },
        detail: { resealed: result.resealed },
      });
      io.out(`re-encrypted ${result.resealed} secret(s): key ${result.oldKeyId} -> ${result.newKeyId}`);
      if (result.newEnvKey) {
        io.out(
          `set TOOLSTORE_SECRET_KEY=${result.newEnvKey} before the next start (also kept in ${result.keyFile})`,
        );
      } else {
        io.out(`key file ${result.keyFile} replaced; the old key is kept as ${result.keyFile}.previous`);
      }
      return EXIT.ok;
    } finally {
      await db.$disconnect();
    }
  },
};
