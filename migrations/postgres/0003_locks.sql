-- Locks only the ledger's roles can take. Advisory locks need no privilege at all, so while the log
-- and its snapshots were guarded by them any role that could connect could hold them and stop every
-- host (issue 30). Now a write transaction locks the one row of `log_lock` FOR UPDATE, and a
-- snapshot writer tries the one row of `snapshot_lock` FOR UPDATE SKIP LOCKED: each needs SELECT and
-- UPDATE on its table. Row locks, not `LOCK TABLE`: a role with only USAGE on the schema can hold a
-- table-level lock until its transaction ends (parse analysis takes it, and `PREPARE` checks no
-- privilege), which a row lock does not conflict with. Neither table has a column, so those grants
-- let a role change nothing; DELETE and INSERT are granted to no ledger role. docs/postgres.md, Locks.
CREATE TABLE log_lock ();
INSERT INTO log_lock DEFAULT VALUES;

CREATE TABLE snapshot_lock ();
INSERT INTO snapshot_lock DEFAULT VALUES;
