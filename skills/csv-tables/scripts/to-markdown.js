// Turns CSV text into a Markdown table. Input: { csv: string, separator?: string, maxRows?: number }.
function parseCsv(text, sep) {
  const rows = [];
  let row = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"' && cell === "") quoted = true;
    else if (c === sep) {
      row.push(cell);
      cell = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(cell);
      if (row.length > 1 || row[0] !== "") rows.push(row);
      row = [];
      cell = "";
    } else cell += c;
  }
  row.push(cell);
  if (row.length > 1 || row[0] !== "") rows.push(row);
  return rows;
}

const escapeCell = (s) => s.replace(/\|/g, "\\|").replace(/\r?\n/g, "<br>");

export default async function (input) {
  if (!input || typeof input.csv !== "string") throw new Error('give { csv: "a,b\\n1,2" }');
  const sep = input.separator ?? ",";
  const maxRows = input.maxRows ?? 200;
  const [header = [], ...body] = parseCsv(input.csv, sep);
  const warnings = [];
  const shown = body.slice(0, maxRows).map((r, i) => {
    if (r.length > header.length)
      warnings.push(`row ${i + 2} has ${r.length} cells, the header ${header.length}`);
    return header.map((_, j) => r[j] ?? "").concat(r.slice(header.length));
  });
  const width = Math.max(header.length, ...shown.map((r) => r.length));
  const pad = (r) => [...r, ...Array(width - r.length).fill("")];
  const lines = [
    `| ${pad(header).map(escapeCell).join(" | ")} |`,
    `| ${Array(width).fill("---").join(" | ")} |`,
    ...shown.map((r) => `| ${pad(r).map(escapeCell).join(" | ")} |`),
  ];
  return {
    markdown: lines.join("\n"),
    rows: body.length,
    columns: header.length,
    truncated: Math.max(0, body.length - shown.length),
    warnings,
  };
}
