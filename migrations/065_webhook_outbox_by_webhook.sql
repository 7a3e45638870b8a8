-- The console lists a key's newest webhook deliveries
-- (GET /dashboard/api/v1/keys/{id}/webhook/deliveries): by webhook, newest
-- first, without reading the whole outbox.
create index webhook_outbox_by_webhook on webhook_outbox (webhook_id, id) where webhook_id is not null;
