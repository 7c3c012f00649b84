/**
 * The root package.json's `start` script (`[exec] node <node flags> <script> <args>`), read once:
 * the benches run the server as `npm start` does, with the same node flags.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** What follows `node` in the start script: its node flags (before the script) and the whole argument list. */
export interface StartScript {
  /** The node flags, e.g. `--max-semi-space-size=8` (none when the script has none). */
  nodeFlags: string[];
  /** Every argument after `node`: the flags, the script and its arguments. */
  args: string[];
}

/**
 * The start script's node arguments; throws when it is not `[exec] node …`.
 *
 * @example
 * const { nodeFlags } = startScript(); // the servers' child of the chat bench runs with them
 */
export function startScript(): StartScript {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  // `exec` (so npm's SIGTERM reaches node, not the shell) is the shell's, not node's.
  const [command, ...args] = (scripts.start ?? '')
    .trim()
    .replace(/^exec\s+/, '')
    .split(/\s+/);
  if (command !== 'node') throw new Error(`package.json's start script is not "[exec] node …": ${scripts.start}`);
  const script = args.findIndex((arg) => !arg.startsWith('-'));
  return { nodeFlags: script < 0 ? args : args.slice(0, script), args };
}
