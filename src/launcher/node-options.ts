// NODE_OPTIONS is split on spaces, with double quotes (and backslash escapes inside them) grouping a
// value: the preload path must be quoted, and the user's own options kept as they are.

/** Quotes one NODE_OPTIONS value the way Node's parser reads it back. */
export function quoteNodeOption(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Splits NODE_OPTIONS as Node does (for checks and tests). */
export function splitNodeOptions(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inQuotes = false;
  let any = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (inQuotes && ch === '\\' && i + 1 < text.length) {
      cur += text[++i];
    } else if (ch === '"') {
      inQuotes = !inQuotes;
      any = true;
    } else if (ch === ' ' && !inQuotes) {
      if (any || cur !== '') out.push(cur);
      cur = '';
      any = false;
    } else {
      cur += ch;
      any = true;
    }
  }
  if (any || cur !== '') out.push(cur);
  return out;
}

/** NODE_OPTIONS with `--require <preload>` added once, after whatever the user had. */
export function withPreload(existing: string | undefined, preloadPath: string): string {
  const current = existing?.trim() ?? '';
  const parts = splitNodeOptions(current);
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] as string;
    if ((p === '--require' || p === '-r') && parts[i + 1] === preloadPath) return current;
    if (p === `--require=${preloadPath}`) return current;
  }
  const add = `--require ${quoteNodeOption(preloadPath)}`;
  return current === '' ? add : `${current} ${add}`;
}
