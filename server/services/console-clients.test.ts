/**
 * toolstore/ui through the real sandbox pool and engine, with console tabs as clients: the
 * question reaches only the tab that started the run, its answer is checked and returned to the
 * action, the wait does not count against the deadline, and a headless run gets client_required.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../core/actions/engine";
import { builtinModules } from "../core/capabilities/builtins";
import { createSandboxPool, type SandboxPool } from "../core/sandbox/pool";
import { testSession } from "../core/testing/fixtures";
import { createMemoryPorts } from "../core/testing/memory-ports";
import {
  type ClientStreamItem,
  type ConsoleClients,
  createConsoleClients,
  type UiPrompt,
} from "./console-clients";

let pool: SandboxPool;
beforeAll(async () => {
  pool = createSandboxPool({ workers: 2 });
  await pool.warm();
});
afterAll(() => pool.close());

let engine: Engine;
let clients: ConsoleClients;
beforeEach(() => {
  engine = createEngine({ ports: createMemoryPorts(), instanceId: "i1", modules: [builtinModules()], pool });
  clients = createConsoleClients();
});

/** A tab's stream read in the background: its items, and a wait for the next prompt. */
function openTab(clientId: string, userId = "user_alice") {
  const controller = new AbortController();
  const items: ClientStreamItem[] = [];
  let notify = () => {};
  let taken = 0;
  void (async () => {
    for await (const item of clients.connect(clientId, userId, controller.signal)) {
      items.push(item);
      notify();
    }
  })();
  return {
    items,
    close: () => controller.abort(),
    /** The next prompt after the last one returned, waiting for it to arrive. */
    async nextPrompt(): Promise<UiPrompt> {
      for (;;) {
        const prompts = items.filter((i) => i.type === "prompt");
        const next = prompts[taken];
        if (next) {
          taken += 1;
          return next.prompt;
        }
        await new Promise<void>((resolve) => {
          notify = resolve;
        });
      }
    },
  };
}

const tick = () => new Promise((r) => setTimeout(r, 20));

describe("toolstore/ui with a console tab", () => {
  it("a headless run gets client_required naming what is missing", async () => {
    const { envelope } = await engine.run({
      session: testSession(),
      code: `import { ask, renderers } from "toolstore/ui";
export default async () => {
  const list = await renderers({});
  try { await ask({ question: "Which?", choices: ["a", "b"] }); return "asked"; }
  catch (e) { return { error: e.error, message: e.message, list }; }
};`,
    });
    expect(envelope.ok).toBe(true);
    expect(envelope.result).toMatchObject({ error: "client_required", list: [] });
    expect(String((envelope.result as { message: string }).message)).toMatch(/headless/);
    expect(envelope.calls.map((c) => [c.capability, c.category, c.decision])).toEqual([
      ["ui.renderers", "read", "allow"],
      ["ui.ask", "read", "allow"],
    ]);
  });

  it("asks the tab that started the run, not another tab, and returns the chosen answer", async () => {
    await tick();
    const tab = openTab("tab-one-123");
    const other = openTab("tab-two-456");
    await tick();
    const running = engine.run({
      session: testSession(),
      limits: { deadlineMs: 1_000 },
      client: clients.router("tab-one-123", "user_alice", "playground tab of alice"),
      code: `import { ask, show, renderers } from "toolstore/ui";
export default async () => {
  await show({ table: [{ city: "Oslo", temp: 3 }, { city: "Rome", temp: 18 }] });
  const who = await renderers({});
  const pick = await ask({ question: "Which city?", choices: ["Oslo", "Rome"] });
  return { pick, who };
};`,
    });
    const shown = await tab.nextPrompt();
    expect(shown).toMatchObject({ call: "show", capability: "ui.show" });
    const question = await tab.nextPrompt();
    expect(question).toMatchObject({ call: "ask", args: { question: "Which city?" } });
    // Waiting longer than the whole deadline: a person deciding is not the action's time.
    await new Promise((r) => setTimeout(r, 1_300));
    expect(() =>
      clients.answer({
        clientId: "tab-two-456",
        userId: "user_alice",
        promptId: question.id,
        answer: "Rome",
      }),
    ).toThrow(/not waiting for this tab/);
    expect(() =>
      clients.answer({
        clientId: "tab-one-123",
        userId: "user_alice",
        promptId: question.id,
        answer: "Paris",
      }),
    ).toThrow(/must be one of \["Oslo","Rome"\]/);
    clients.answer({ clientId: "tab-one-123", userId: "user_alice", promptId: question.id, answer: "Rome" });
    const { envelope } = await running;
    expect(envelope).toMatchObject({
      ok: true,
      result: {
        pick: "Rome",
        who: [{ id: "tab-one-123", kind: "console", renders: ["show", "ask", "confirm", "progress"] }],
      },
    });
    expect(envelope.calls.map((c) => c.capability)).toEqual(["ui.show", "ui.renderers", "ui.ask"]);
    expect(other.items).toEqual([]);
    expect(tab.items.at(-1)).toMatchObject({ type: "settled", outcome: "answered", answer: "Rome" });
    tab.close();
    other.close();
  });

  it("a question nobody answers times out with an error the action can catch", async () => {
    const tab = openTab("tab-timeout-1");
    await tick();
    const { envelope } = await engine.run({
      session: testSession(),
      client: clients.router("tab-timeout-1", "user_alice", "tab"),
      code: `import { confirm } from "toolstore/ui";
export default async () => {
  try { return await confirm({ message: "Sure?", timeout_ms: 1000 }); }
  catch (e) { return e.error; }
};`,
    });
    expect(envelope.result).toBe("ui_timeout");
    expect(tab.items.at(-1)).toMatchObject({ type: "settled", outcome: "expired" });
    tab.close();
  });

  it("checks an answer against the question's schema, and declining throws ui_declined", async () => {
    const tab = openTab("tab-schema-1");
    await tick();
    const running = engine.run({
      session: testSession(),
      client: clients.router("tab-schema-1", "user_alice", "tab"),
      code: `import { ask } from "toolstore/ui";
export default async () => {
  const form = await ask({ question: "Trip", schema: { type: "object", properties: { days: { type: "integer", minimum: 1 } }, required: ["days"] } });
  let second;
  try { second = await ask({ question: "Anything else?" }); } catch (e) { second = e.error; }
  return { form, second };
};`,
    });
    const form = await tab.nextPrompt();
    expect(() =>
      clients.answer({
        clientId: "tab-schema-1",
        userId: "user_alice",
        promptId: form.id,
        answer: { days: 0 },
      }),
    ).toThrow(/does not match the schema/);
    clients.answer({
      clientId: "tab-schema-1",
      userId: "user_alice",
      promptId: form.id,
      answer: { days: 4 },
    });
    const text = await tab.nextPrompt();
    clients.answer({ clientId: "tab-schema-1", userId: "user_alice", promptId: text.id, decline: true });
    const { envelope } = await running;
    expect(envelope.result).toEqual({ form: { days: 4 }, second: "ui_declined" });
    tab.close();
  });

  it("a tab's client id cannot be taken over by another user, and a closed tab renders nothing", async () => {
    const tab = openTab("tab-owned-1", "user_alice");
    await tick();
    const stolen = clients.connect("tab-owned-1", "user_mallory", new AbortController().signal);
    await expect(stolen.next()).rejects.toThrow(/another user/);
    tab.close();
    await tick();
    const { envelope } = await engine.run({
      session: testSession(),
      client: clients.router("tab-owned-1", "user_alice", "tab"),
      code: `import { progress } from "toolstore/ui";
export default async () => { try { await progress({ message: "half", fraction: 0.5 }); } catch (e) { return e.error; } };`,
    });
    expect(envelope.result).toBe("client_required");
  });
});
