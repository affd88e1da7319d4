-- Locks only the ledger's roles can take. Advisory locks need no privilege at all, so while the log
-- and its snapshots were guarded by them any role that could connect could hold them and stop every
-- host (issue 30). A writer now holds `log_lock` in EXCLUSIVE mode for each write transaction
-- (`LOCK TABLE` in that mode needs UPDATE, DELETE or TRUNCATE on it), and a snapshot writer tries
-- the one row of `snapshot_lock` with `FOR UPDATE SKIP LOCKED` (SELECT and UPDATE). Neither table
-- has a column, so those grants let a role change nothing: `log_lock` stays empty, `snapshot_lock`
-- keeps its one row (DELETE and INSERT are granted to no ledger role). docs/postgres.md, Setup.
CREATE TABLE log_lock ();

CREATE TABLE snapshot_lock ();
INSERT INTO snapshot_lock DEFAULT VALUES;
