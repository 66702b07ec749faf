import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseHttpListen } from '../../src/cli/listen-address.js';
import { NoticeStore } from '../../src/mcp/notice-store.js';
import { defaultSessionId, noticeTaskQueue, sessionDigest } from '../../src/mcp/session.js';
import { REMEMBERED_NOTICE_IDS } from '../../src/shared/notice.js';

describe('defaultSessionId', () => {
  it('names the user, the host and the absolute working directory', () => {
    expect(defaultSessionId('/work/project/')).toBe(
      `mcp:${os.userInfo().username}@${os.hostname()}:/work/project`,
    );
  });

  it('gives each session its own notice queue, the same every time', () => {
    expect(noticeTaskQueue('a')).toBe(noticeTaskQueue('a'));
    expect(noticeTaskQueue('a')).not.toBe(noticeTaskQueue('b'));
    expect(noticeTaskQueue('a')).toBe(`durable-bash-mcp@${sessionDigest('a')}`);
    expect(sessionDigest('a')).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('parseHttpListen', () => {
  it('reads a bare port as loopback, and host:port as given', () => {
    expect(parseHttpListen('8931')).toEqual({ host: '127.0.0.1', port: 8931 });
    expect(parseHttpListen('0.0.0.0:80')).toEqual({ host: '0.0.0.0', port: 80 });
    expect(parseHttpListen('[::1]:0')).toEqual({ host: '[::1]', port: 0 });
  });

  it('refuses anything else with the value it got', () => {
    expect(() => parseHttpListen('host:port')).toThrow(
      'expected [host:]port, e.g. 8931 or 127.0.0.1:8931, got host:port',
    );
    expect(() => parseHttpListen('70000')).toThrow('got 70000');
  });
});

describe('NoticeStore', () => {
  const store = () => new NoticeStore(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-notices-')), 's');

  it('records a notice once, and forgets neither way across a new store on the same file', () => {
    const first = store();
    expect(first.record('n1', 'one')).toBe(true);
    expect(first.record('n1', 'one')).toBe(false);
    first.setLogged(['n1'], true);
    const again = new NoticeStore(path.dirname(path.dirname(first.file)), 's');
    expect(again.unlogged()).toEqual([]);
    expect(again.take()).toEqual(['one']);
    expect(again.take()).toEqual([]);
    expect(again.record('n1', 'one')).toBe(false);
    expect(JSON.parse(readFileSync(again.file, 'utf8'))).toEqual({ pending: [], delivered: ['n1'] });
  });

  it(`remembers the last ${REMEMBERED_NOTICE_IDS} delivered ids`, () => {
    const notices = store();
    for (let i = 0; i <= REMEMBERED_NOTICE_IDS; i += 1) notices.record(`n${i}`, `${i}`);
    expect(notices.take()).toHaveLength(REMEMBERED_NOTICE_IDS + 1);
    expect(notices.record(`n${REMEMBERED_NOTICE_IDS}`, 'again')).toBe(false);
    expect(notices.record('n0', 'forgotten')).toBe(true);
  });
});
