// An MCP client for toolreg's end-to-end tests: the MCP TypeScript SDK's
// own Client over its StdioClientTransport, launching the server command.
//
// usage: node client.mjs -- CMD ARGS...   < plan.json
// The plan is {"steps": [...]} as for client.py (list_tools, call,
// list_prompts, get_prompt). list_tools gives the tools as sent (raw JSON),
// each also parsed with the SDK's ToolSchema, and the SDK's own listTools
// (validated with ListToolsResultSchema). Prints {"protocol", "results"}.
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const cmd = process.argv.slice(process.argv.indexOf('--') + 1);
const plan = JSON.parse(readFileSync(0, 'utf8') || '{"steps": []}');
const transport = new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), env: process.env, stderr: 'inherit' });
// The version the server answered `initialize` with.
let protocol = null;
transport.setProtocolVersion = (v) => {
  protocol = v;
};
const client = new Client({ name: 'toolreg-e2e', version: '1.0.0' });
await client.connect(transport);

const results = [];
for (const step of plan.steps) {
  try {
    if (step.op === 'list_tools') {
      const raw = await client.request({ method: 'tools/list' }, z.object({ tools: z.array(z.any()) }).passthrough());
      const sdk = raw.tools.map((t) => ToolSchema.parse(t));
      const typed = await client.listTools();
      results.push({ tools: raw.tools, sdk_tools: sdk, sdk_count: typed.tools.length });
    } else if (step.op === 'call') {
      const started = Date.now();
      const out = await client.callTool({ name: step.name, arguments: step.args ?? {} });
      results.push({ ...out, name: step.name, elapsed_ms: Date.now() - started });
    } else if (step.op === 'list_prompts') {
      results.push(await client.listPrompts());
    } else if (step.op === 'get_prompt') {
      results.push(await client.getPrompt({ name: step.name, arguments: step.args ?? {} }));
    } else {
      throw new Error(`unknown op ${step.op}`);
    }
  } catch (e) {
    results.push({ error: String(e?.message ?? e) });
  }
}
process.stdout.write(JSON.stringify({ protocol, capabilities: client.getServerCapabilities(), results }) + '\n');
await client.close();
