-- The append-only event log, as in the SQLite store: `body` is the event's RFC 8785 canonical JSON
-- and is the truth; the other columns are copies for indexing and auditing (`atc verify` checks
-- that they agree with `body`). Applied with search_path set to the ledger's schema.
CREATE TABLE events (
  seq         bigint  PRIMARY KEY CHECK (seq >= 1),
  type        text    NOT NULL,
  at          bigint  NOT NULL,
  grant_id    text,
  tool        text,
  call_id     text,
  reason      text,
  input_bytes bigint,
  hash        text    NOT NULL CHECK (length(hash) = 64),
  prev_hash   text    NOT NULL CHECK (length(prev_hash) = 64),
  body        text    NOT NULL
);

CREATE INDEX events_by_grant ON events (grant_id, seq);

-- History is never rewritten: every UPDATE, DELETE and TRUNCATE of events is refused, whoever asks.
-- Only a superuser can get past this (session_replication_role = replica skips triggers), and only
-- the table's owner can drop the trigger: the ledger's own role is neither (docs/postgres.md).
CREATE FUNCTION events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events are append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER events_refuse_update_delete BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION events_refuse_change();

CREATE TRIGGER events_refuse_truncate BEFORE TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_refuse_change();

-- The log's head, one row. The default locking protocol (an advisory transaction lock) does not
-- need it; the head-row protocol measured against it locks this row FOR UPDATE (docs/postgres.md).
CREATE TABLE head (
  id   boolean PRIMARY KEY DEFAULT true CHECK (id),
  seq  bigint  NOT NULL CHECK (seq >= 0),
  hash text    NOT NULL CHECK (length(hash) = 64)
);
INSERT INTO head (id, seq, hash) VALUES (true, 0, repeat('0', 64));
