-- Until when the forward activity that broadcast a forward watches for its inclusion itself; the watcher
-- holds its `forward` hint back until then (src/chains/push.ts).
ALTER TABLE "payments" ADD COLUMN "forward_watch_until" timestamp with time zone;
