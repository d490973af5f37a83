/**
 * Which runner a skill script goes to, by its extension: JavaScript to the sandbox, Python to the
 * Python runtime (when the server has one). Any other language is refused with a message saying
 * what it is and what to do instead.
 */
import { AppError } from "../errors";
import type { SkillScriptRunner } from "./run-script";

const LANGUAGES: Record<string, string> = {
  py: "Python",
  sh: "shell",
  bash: "shell",
  zsh: "shell",
  ts: "TypeScript",
  rb: "Ruby",
  pl: "Perl",
  php: "PHP",
  go: "Go",
  rs: "Rust",
  java: "Java",
  ps1: "PowerShell",
  bat: "Windows batch",
  cmd: "Windows batch",
  lua: "Lua",
  r: "R",
};
const JAVASCRIPT = new Set(["js", "mjs"]);

export interface SkillScriptRunners {
  javascript?: SkillScriptRunner | undefined;
  python?: SkillScriptRunner | undefined;
}

/** @param label `skill/path`, as messages show it */
export function scriptRunnerFor(path: string, label: string, runners: SkillScriptRunners): SkillScriptRunner {
  const ext = path.includes(".") ? (path.split(".").pop() ?? "").toLowerCase() : "";
  if (JAVASCRIPT.has(ext)) {
    if (runners.javascript) return runners.javascript;
    throw new AppError("BAD_INPUT", `${label} is JavaScript, but this server runs no skill scripts`);
  }
  if (ext === "py") {
    if (runners.python) return runners.python;
    throw new AppError(
      "BAD_INPUT",
      `${label} is a Python script: not runnable here. Python scripts run in ToolStore's Python runtime when this server has one; until then read it with skills.read and follow it yourself`,
    );
  }
  const language = LANGUAGES[ext] ?? (ext ? `a .${ext} file` : "a file without an extension");
  throw new AppError(
    "BAD_INPUT",
    `${label} is ${LANGUAGES[ext] ? `a ${language} script` : language}: not runnable here. Only JavaScript scripts (.js, .mjs) run in the sandbox${ext === "ts" ? "; compile it to JavaScript" : ""}`,
  );
}
