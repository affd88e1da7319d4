-- Folded state at `seq`, to open a long log without folding all of it. `head_hash` must equal the
-- stored event's hash at `seq`; `state_hash` is the SHA-256 (hex) of the `state` text. Snapshots are
-- a cache: deleting them loses nothing but speed.
CREATE TABLE snapshots (
  seq        bigint      PRIMARY KEY CHECK (seq >= 1),
  head_hash  text        NOT NULL CHECK (length(head_hash) = 64),
  state      text        NOT NULL,
  state_hash text        NOT NULL CHECK (length(state_hash) = 64),
  created_at timestamptz NOT NULL DEFAULT now()
);
