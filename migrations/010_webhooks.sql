-- Webhooks and per-request callbacks (domain/webhook.h).
--
-- Registrations are events on a stream per API key ("webhook-key-<id>");
-- the inline `webhooks` projection is what the API reads. Deliveries come from
-- the asynchronous `webhook_outbox` projection, which writes one outbox row
-- per (event, target) in the same transaction as its checkpoint, so an event
-- that committed is queued exactly once even across crashes. What happened to
-- a delivery (attempts, leases, the 2xx) and the health of each webhook are
-- operational state written by the dispatcher (pipeline/webhook_dispatcher),
-- kept apart so that a rebuilt projection equals the live one and a rebuild
-- never sends anything twice.
create sequence webhook_ids;

create table webhooks (
  id         bigint primary key,
  account_id bigint not null,
  key_id     bigint not null,
  url        text   not null,
  events     jsonb  not null,  -- array of event kinds, in catalogue order
  created_at timestamptz not null,
  revoked_at timestamptz
);
create unique index webhooks_one_active_per_key on webhooks (key_id) where revoked_at is null;

-- The outbox projection's own memory: which webhook each key had and what each
-- transcription looked like when an event was appended. It reads nothing
-- else, so a replay from position 0 writes exactly the same outbox.
create table webhook_outbox_targets (
  key_id     bigint primary key,
  webhook_id bigint not null,
  url        text   not null,
  events     jsonb  not null
);
create table webhook_outbox_subjects (
  transcription_id bigint primary key,
  account_id       bigint not null,
  key_id           bigint,
  callback_url     text,
  snapshot         jsonb  not null  -- the webhook snapshot of the transcription
);

-- id: the event's global position * 2, plus 1 for a per-request callback, so
-- the same event keeps the same ids whenever it is projected.
create table webhook_outbox (
  id               bigint primary key,
  event_id         text   not null,  -- 'evt_<position>', the body's id
  event            text   not null,
  account_id       bigint not null,
  transcription_id bigint,
  webhook_id       bigint,           -- null for a per-request callback
  url              text   not null,
  body             text   not null,  -- the exact bytes sent and signed
  created_at       timestamptz not null
);
create index webhook_outbox_transcription on webhook_outbox (transcription_id) where transcription_id is not null;

-- One row per outbox row, inserted by the projection next to it (a replay
-- keeps an existing row). status: pending until a 2xx (delivered), the last
-- allowed attempt failed (failed), or the target went away (dropped: webhook
-- revoked, replaced or disabled; expired: the event was already older than a
-- day when it was first projected, e.g. history replayed into a new outbox).
create table webhook_deliveries (
  delivery_id     bigint primary key,
  status          text   not null default 'pending'
                  check (status in ('pending', 'delivered', 'failed', 'dropped', 'expired')),
  attempts        int    not null default 0,
  next_attempt_at timestamptz not null default now(),
  lease_until     timestamptz,
  last_status     int,
  last_error      text,
  delivered_at    timestamptz,
  updated_at      timestamptz not null default now()
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';

create table webhook_health (
  webhook_id           bigint primary key,
  consecutive_failures int not null default 0,
  disabled_at          timestamptz,
  last_delivery_at     timestamptz,
  last_success_at      timestamptz
);
