// Per-column statistics of CSV text. Input: { csv: string, separator?: string }.
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

export default async function (input) {
  if (!input || typeof input.csv !== "string") throw new Error('give { csv: "a,b\\n1,2" }');
  const [header = [], ...body] = parseCsv(input.csv, input.separator ?? ",");
  const columns = header.map((name, j) => {
    const cells = body.map((r) => (r[j] ?? "").trim());
    const filled = cells.filter((c) => c !== "");
    const numbers = filled.map(Number).filter((n) => Number.isFinite(n));
    const numeric = filled.length > 0 && numbers.length === filled.length;
    const column = { name, count: cells.length, empty: cells.length - filled.length, numeric };
    if (numeric) {
      const sum = numbers.reduce((a, b) => a + b, 0);
      column.min = Math.min(...numbers);
      column.max = Math.max(...numbers);
      column.mean = Math.round((sum / numbers.length) * 1000) / 1000;
    } else {
      column.distinct = new Set(filled).size;
    }
    return column;
  });
  return { rows: body.length, columns };
}
