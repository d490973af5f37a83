/** Example actions for the playground menu: real calls to the built-in modules and the example toolsets. */

export interface Example {
  id: string;
  title: string;
  /** Modules the example imports; it is offered only when all of them are mounted. */
  modules: string[];
  code: string;
}

/** A 64×64 PNG (the ToolStore mark), small enough to read in the approval card. */
const MARK_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAEAAAABACAIAAAAlC+aJAAACR0lEQVR42tXY3XLSQBjG8fe+aq1WqyThIxDKp1atWm2t1TvywiBaQgjcQI9j8+4ymakDwru7zTyZ55CD3/8kbJYOxpOD8eQJ73A0ORxNn653NJoeDafP1nteLD4exseD+MV6L3kng/ikH7/q/1Z7zav19Lxif3xecKpX5zV4ze6tWosXdm/DqFib14lmnWgWRbOoU6zLO+X1OglB63vthKD1OgBX328nBK1XAcD6QTshaH0ZAKofhByAqx+GCUHrOQBZPwrnBK0vA0D1YxWAqy8CoPXjVhEArH/TmhO0ngOQ9W9bc3Khzzc81vVlgC19vsNjUa8DrOjzPR8r+rNmSpXo1WOu1wGV6NVjqH/XTKlCvXpM9BzgRn/3ix5sy4/F+vfNlKy/c/6l/zdDrC8DHke/pUGm1wG2/q120W9qkOk/NFKy+F9rEpDnuUCvAwTnHBP9pgaB/ryRkuyU5ipgT/15Y0GyM6aTgP31H1WA4ITsIkCgLwJk53tHAfvqVYDk68RFgED/qb4g2beVi9eoQK8DZF+GdgNk+s/1BYm/a+0eJWT6MkD2VW7rMCfW6wDxnYKt47RYf1HPyPBGxPyDxkR/EXCA4X1OhfovQUZWbqOq0usAK3dplei/BhnZvQnchW7yznmgLwPs3mNuodvV64DHuYV1ob8MMoLWX/ocgKu/8jOC1l/5S4LWf1MBuPoiAFqvA3D11/6SoPXXHgfg6r97S4LWcwCyXgfg6m+8JUHrb7wVQet/1FYErdcBuPqftRVB6+8D/gKkUuTN69xy6QAAAABJRU5ErkJggg==";

export const EXAMPLES: Example[] = [
  {
    id: "read-then-write",
    title: "Read, then write (asks for approval)",
    modules: ["store", "assets"],
    code: `// Read, then write
// Lists the mounted modules (read), then saves an image (write).
import { list } from "toolstore/store";
import { save } from "toolstore/assets";

export default async function () {
  // A read capability: runs without asking.
  const { tools } = await list();
  console.log(\`\${tools.length} modules mounted\`);

  // A write capability: waits for Allow / Deny in default mode; in plan mode it is planned, not run.
  const image = await save({ name: "toolstore-mark", data_base64: "${MARK_PNG}" });
  return { modules: tools.map((t) => t.name), saved: image.asset_id };
}
`,
  },
  {
    id: "chart",
    title: "Draw a chart and keep it as an image",
    modules: ["chart", "assets"],
    code: `// Bar chart
// Draws a chart with the chart toolset, then saves it so it shows under Images.
import { bar_chart } from "toolstore/chart";
import { save } from "toolstore/assets";

export default async function () {
  const chart = await bar_chart({
    title: "Calls per day",
    labels: ["Mon", "Tue", "Wed", "Thu", "Fri"],
    values: [12, 19, 7, 23, 15],
  });
  const image = await save({ name: "calls-per-day", data_base64: chart.data_base64 });
  return { alt: chart.alt, asset_id: image.asset_id };
}
`,
  },
  {
    id: "calculate",
    title: "Calculate and convert (read only, runs in plan mode)",
    modules: ["calculator", "units"],
    code: `// Calculate and convert
// Read-only calls: they run in every mode, plan included.
import { evaluate, statistics } from "toolstore/calculator";
import { convert } from "toolstore/units";

export default async function () {
  const area = await evaluate({ expression: "pi * r^2", variables: { r: 3 }, precision: 2 });
  const stats = await statistics({ values: [3, 1, 4, 1, 5, 9, 2, 6] });
  const marathon = await convert({ value: 42.195, from: "km", to: "mi" });
  return { area: area.value, mean: stats.mean, marathon_miles: marathon.value };
}
`,
  },
  {
    id: "discover",
    title: "Discover toolsets and read their docs",
    modules: ["store"],
    code: `// Discover toolsets
// What can this session import, and how is it documented?
import { list, info } from "toolstore/store";

export default async function () {
  const { tools } = await list();
  const first = tools.find((t) => t.source === "toolset") ?? tools[0];
  if (!first) return "No modules mounted: publish a toolset first.";
  const definition = await info({ tool_name: first.name });
  console.log(definition.doc.slice(0, 400));
  return tools.map((t) => ({ module: t.name, functions: t.functions.map((f) => \`\${f.name} [\${f.category}]\`) }));
}
`,
  },
  {
    id: "refusal",
    title: "Handle a refusal (deny or plan mode)",
    modules: ["assets"],
    code: `// Handle a refusal
// A denied or blocked call throws an error the action can catch.
import { save } from "toolstore/assets";

export default async function () {
  try {
    const image = await save({ name: "maybe", data_base64: "${MARK_PNG}" });
    return { saved: image.asset_id };
  } catch (e) {
    // e.error is "permission_denied" (denied or expired) or "blocked_in_plan_mode"
    console.warn(\`not saved: \${e.error}\`);
    return { saved: null, refused: e.error, reason: e.reason ?? null };
  }
}
`,
  },
  {
    id: "lisp",
    title: "Run a Lisp program (execute, asks)",
    modules: ["lisp"],
    code: `// Lisp program
// The execute category asks before running code.
import { run } from "toolstore/lisp";

export default async function () {
  const out = await run({
    program: "(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2))))) (map fib (range 0 15))",
  });
  return out.value;
}
`,
  },
  {
    id: "weather",
    title: "Weather in Oslo (external, asks)",
    modules: ["weather"],
    code: `// Weather in Oslo
// External calls reach the internet and ask first.
import { find_place, current_weather } from "toolstore/weather";

export default async function () {
  const [place] = await find_place({ name: "Oslo", count: 1 });
  if (!place) return "Oslo not found";
  const now = await current_weather({ latitude: place.latitude, longitude: place.longitude });
  return { place: place.name, ...now };
}
`,
  },
  {
    id: "ask",
    title: "Ask the person here (toolstore/ui)",
    modules: ["ui"],
    code: `// Ask, then show
// Questions and panes appear in this timeline; only this tab can answer them.
import { ask, show, progress } from "toolstore/ui";
import { parse } from "toolstore/lib/csv";

export default async function () {
  const { data } = parse("city,temp\\nOslo,3\\nRome,18\\nLima,22", { header: true, dynamicTyping: true });
  await show({ title: "Cities", table: data });
  const city = await ask({ question: "Which city should the report be about?", choices: data.map((r) => r.city) });
  await progress({ message: \`Writing the report on \${city}\`, fraction: 0.5 });
  return { city, temp: data.find((r) => r.city === city).temp };
}
`,
  },
  {
    id: "libraries",
    title: "YAML, CSV and dates (libraries, no gate)",
    modules: [],
    code: `// Libraries
// toolstore/lib/* run inside the action: no gate decision, nothing in the timeline.
import { parse as yaml } from "toolstore/lib/yaml";
import { unparse } from "toolstore/lib/csv";
import { addDays, format, parseISO } from "toolstore/lib/dates";

export default async function () {
  const plan = yaml("start: 2026-03-01\\nsteps: [draft, review, ship]");
  const rows = plan.steps.map((step, i) => ({ step, due: format(addDays(parseISO(plan.start), i * 7), "EEE d MMM") }));
  return unparse(rows);
}
`,
  },
];

export const DEFAULT_CODE = (EXAMPLES[0] as Example).code;
