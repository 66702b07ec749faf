/**
 * The command transcripts of the README and docs/ are real: every `$ node dist/cli/main.js ...`
 * line of their transcript blocks is run (through bash, against a dev server with a command worker on the
 * default task queue), and what it printed must be what the README shows, up to what differs on
 * every run: task ids (matched by order of appearance), ages in `ps`, spill directories and column
 * padding. A line of another program (`.temporal/bin/temporal ...`) is Temporal's own output: not
 * compared.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TASK_QUEUE } from '../../src/shared/task-queues.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';

const execFileAsync = promisify(execFile);
const root = path.resolve('.');
const suite = useDevServerWithWorker({ taskQueue: DEFAULT_TASK_QUEUE });

interface Step {
  command: string;
  expected: string;
}

/** The transcript blocks: fenced blocks whose first line is a `$ node dist/cli/main.js` command. */
function transcripts(markdown: string): Step[][] {
  const blocks = [...markdown.matchAll(/```\n(\$ node dist\/cli\/main\.js[\s\S]*?)```/g)].map(
    (m) => m[1] as string,
  );
  return blocks.map((block) => {
    const steps: Step[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('$ ')) steps.push({ command: line.slice(2), expected: '' });
      else if (steps.length > 0 && line !== '') (steps.at(-1) as Step).expected += `${line}\n`;
    }
    return steps;
  });
}

const TASK_ID = /bash-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** What differs from run to run, made the same: ids by order of appearance, ages, spill dirs, padding. */
function normalized(text: string, ids: Map<string, string>): string {
  return text
    .replace(TASK_ID, (id) => {
      if (!ids.has(id)) ids.set(id, `bash-<${ids.size + 1}>`);
      return ids.get(id) as string;
    })
    .replace(/\S*\/(bash-<\d+>)\.(stdout|stderr)/g, '<spill dir>/$1.$2')
    .replace(/ \d+[smhd] /g, ' <age> ')
    .replace(/ {2,}/g, '  ');
}

const pages = ['README.md', ...readdirSync(path.join(root, 'docs')).map((name) => `docs/${name}`)];
const blocks = pages.flatMap((page) =>
  transcripts(readFileSync(path.join(root, page), 'utf8')).map(
    (steps, i) => [`${page} #${i + 1}`, steps] as const,
  ),
);

describe('the example test in the README', () => {
  it('is test/testing/readme-example.test.ts, byte for byte, so npm test runs what it shows', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const example = readFileSync(path.join(root, 'test/testing/readme-example.test.ts'), 'utf8');
    expect(readme).toContain(`\`\`\`ts\n${example}\`\`\`\n`);
  });
});

describe('the documentation', () => {
  it('has transcript blocks to check', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(3);
  });

  it.each(blocks)(
    '%s prints what it shows',
    async (_, steps) => {
      // The README's ids, as the commands use them, stand for the ids this run printed in their place.
      const readmeIds = new Map<string, string>();
      const runIds = new Map<string, string>();
      for (const step of steps) {
        const command = step.command.replace(TASK_ID, (id) => {
          const placeholder = normalized(id, readmeIds);
          const actual = [...runIds].find(([, p]) => p === placeholder)?.[0];
          if (!actual) throw new Error(`the README uses ${id} before this run printed one in its place`);
          return actual;
        });
        if (!command.startsWith('node dist/cli/main.js')) continue; // another program's own output
        // Both streams in one pipe, in the order a terminal shows them (`logs` prints the status on stderr).
        const { stdout } = await execFileAsync('bash', ['-c', `${command} 2>&1`], {
          cwd: root,
          env: {
            ...process.env,
            TEMPORAL_ADDRESS: suite.env.address,
            TEMPORAL_NAMESPACE: suite.env.namespace ?? 'default',
          },
        });
        expect(normalized(stdout, runIds), command).toBe(normalized(step.expected, readmeIds));
      }
    },
    120_000,
  );
});
