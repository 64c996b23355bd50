ALTER TABLE "payments" ADD COLUMN "due_height" bigint;--> statement-breakpoint
CREATE INDEX "payments_due_idx" ON "payments" USING btree ("network","due_height") WHERE "payments"."result" = 'pending';