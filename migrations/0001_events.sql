-- The append-only event log. `body` is the event's RFC 8785 canonical JSON and is the truth; the
-- other columns are copies for indexing and auditing (`atc verify` checks they agree with `body`).
CREATE TABLE events (
  seq         INTEGER PRIMARY KEY CHECK (seq >= 1),
  type        TEXT    NOT NULL,
  at          INTEGER NOT NULL,
  grant_id    TEXT,
  tool        TEXT,
  call_id     TEXT,
  reason      TEXT,
  input_bytes INTEGER,
  hash        TEXT    NOT NULL CHECK (length(hash) = 64),
  prev_hash   TEXT    NOT NULL CHECK (length(prev_hash) = 64),
  body        TEXT    NOT NULL
) STRICT;

-- One index only: each index roughly doubles the cost of an insert. Audits by grant use it; other
-- filters scan, which is fine for an offline audit.
CREATE INDEX events_by_grant ON events (grant_id, seq);

-- History is never rewritten: refuse every UPDATE and DELETE of an event.
CREATE TRIGGER events_refuse_update BEFORE UPDATE ON events
BEGIN
  SELECT RAISE(ABORT, 'events are append-only: UPDATE refused');
END;

CREATE TRIGGER events_refuse_delete BEFORE DELETE ON events
BEGIN
  SELECT RAISE(ABORT, 'events are append-only: DELETE refused');
END;
