-- Text a log follower keeps beside a snapshot (the transparency option's Merkle frontier and last
-- signed checkpoint, docs/transparency.md), handed back when the ledger opens from that snapshot.
-- A cache like the snapshot itself: NULL (or deleting it) costs only a rebuild from the events.
ALTER TABLE snapshots ADD COLUMN follower TEXT;
