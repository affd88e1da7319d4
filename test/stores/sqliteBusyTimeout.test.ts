import Database from 'better-sqlite3';
import { BusyTimeoutSwitch } from '../../src/stores/sqlite/sqliteBusyTimeout';

/** A connection that records the statements it is given; `inTransaction` as the test sets it. */
function fakeConnection() {
  const executed: string[] = [];
  const db = { inTransaction: false, exec: (sql: string) => void executed.push(sql) };
  return { db, executed };
}

describe('switching the SQLite busy timeout around BEGIN IMMEDIATE', () => {
  it('turns the busy handler off before the first BEGIN and leaves it off for the next ones', () => {
    const { db, executed } = fakeConnection();
    const busy = new BusyTimeoutSwitch(db, 5_000);
    busy.forBegin();
    busy.forBegin();
    busy.forBegin();
    expect(executed).toEqual(['PRAGMA busy_timeout = 0']);
  });

  it('restores the timeout before a read outside a transaction, once', () => {
    const { db, executed } = fakeConnection();
    const busy = new BusyTimeoutSwitch(db, 5_000);
    busy.forBegin();
    busy.forRead();
    busy.forRead();
    expect(executed).toEqual(['PRAGMA busy_timeout = 0', 'PRAGMA busy_timeout = 5000']);
  });

  it('leaves reads inside the write transaction without a busy handler (they cannot meet SQLITE_BUSY)', () => {
    const { db, executed } = fakeConnection();
    const busy = new BusyTimeoutSwitch(db, 5_000);
    busy.forBegin();
    db.inTransaction = true;
    busy.forRead();
    expect(executed).toEqual(['PRAGMA busy_timeout = 0']);
  });

  it('changes nothing for reads before any BEGIN (the connection opened with the timeout)', () => {
    const { db, executed } = fakeConnection();
    const busy = new BusyTimeoutSwitch(db, 5_000);
    busy.forRead();
    expect(executed).toEqual([]);
  });

  it('sets what SQLite reads back on a real connection', () => {
    const db = new Database(':memory:', { timeout: 250 });
    try {
      const busy = new BusyTimeoutSwitch(db, 250);
      busy.forBegin();
      expect(db.pragma('busy_timeout', { simple: true })).toBe(0);
      busy.forRead();
      expect(db.pragma('busy_timeout', { simple: true })).toBe(250);
    } finally {
      db.close();
    }
  });
});
