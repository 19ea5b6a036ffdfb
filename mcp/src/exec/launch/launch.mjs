// toolreg mcp serve: runs one call of a tool's code under node or deno.
// argv: MODE TARGET. MODE is `matimo-function` (TARGET: the code file; its
// default export is called with the params), `matimo-script` (TARGET: the
// inline code, a function expression called with the params) or `shinkai`
// (TARGET: tool.ts; its `run(config, params)` is called). stdin holds
// {"params": {...}, "config": {...}}; stdout gets the result as JSON and
// nothing else (the tool's own console output goes to stderr).
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { Buffer } from 'node:buffer';

const [mode, target] = process.argv.slice(2);
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
const params = input.params ?? {};
const config = input.config ?? {};
const write = process.stdout.write.bind(process.stdout);
console.log = console.info = console.debug = console.error;

let result;
if (mode === 'matimo-function') {
  const module = await import(pathToFileURL(target).href);
  const fn = module.default ?? module;
  result = await fn(params, {});
} else if (mode === 'matimo-script') {
  const fn = (0, eval)('(' + target + ')');
  result = await fn(params, {});
} else if (mode === 'shinkai') {
  const module = await import(pathToFileURL(target).href);
  result = await module.run(config, params);
} else {
  throw new Error(`unknown mode ${mode}`);
}
write(JSON.stringify(result === undefined ? null : result));
