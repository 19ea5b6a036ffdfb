// Check toolreg's MCP exports with the MCP TypeScript SDK's own zod schemas:
// ToolSchema for each exported tool and ListToolsResultSchema for the list,
// for every protocol version the SDK speaks (SUPPORTED_PROTOCOL_VERSIONS).
// Exports for a version the SDK doesn't speak are reported as skipped.
// Usage: node check.mjs EXPORT_DIR   (exit 1 on any rejection)
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  ToolSchema,
  ListToolsResultSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

const root = process.argv[2];
if (!root) {
  console.error('usage: node check.mjs EXPORT_DIR');
  process.exit(2);
}
const failures = [];
const checked = [];
for (const version of ['2025-06-18', '2025-11-25', '2026-07-28']) {
  const dir = join(root, `mcp-${version}`);
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    console.log(`mcp-${version}: the SDK does not speak ${version} (it speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}); skipped`);
    continue;
  }
  if (!existsSync(dir)) {
    failures.push(`mcp-${version}: no exports in ${dir}`);
    continue;
  }
  const tools = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const doc = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    tools.push(doc);
    const r = ToolSchema.safeParse(doc);
    if (!r.success) failures.push(`mcp-${version}/${file}: ToolSchema: ${r.error.message}`);
  }
  const list = ListToolsResultSchema.safeParse({ tools });
  if (!list.success) failures.push(`mcp-${version}: ListToolsResultSchema: ${list.error.message}`);
  checked.push(`mcp-${version} ${tools.length}`);
}

// The check must be able to fail: an array outputSchema is refused.
const bad = ToolSchema.safeParse({ name: 'x', inputSchema: { type: 'object' }, outputSchema: { type: 'array' } });
if (bad.success) failures.push('self-test: ToolSchema accepted an array outputSchema');

console.log(`checked: ${checked.join(', ')}`);
for (const f of failures) console.error(`REJECTED ${f}`);
if (failures.length) {
  console.error(`${failures.length} export(s) rejected by the MCP TypeScript SDK`);
  process.exit(1);
}
console.log('MCP TypeScript SDK: every export accepted');
