-- Where each asynchronous projection has got to in the global order. The
-- checkpoint is written in the same transaction as the read-model rows.
create table projection_checkpoints (
  name          text primary key,
  last_tx       xid8   not null default '0'::xid8,
  last_position bigint not null default 0,
  updated_at    timestamptz not null default now()
);

-- Identifiers are plain integers drawn from sequences before the creating
-- event is appended; a gap after a refused command is harmless.
create sequence account_ids;
create sequence api_key_ids;

-- Read models of the Account aggregate. Both are inline projections: they are
-- written in the appending transaction so that a new key works at once and a
-- revoked key stops at once.
create table accounts (
  id             bigint primary key,
  email          text not null,
  plan           text not null,
  balance_micros bigint not null default 0,
  created_at     timestamptz not null,
  updated_at     timestamptz not null
);
create unique index accounts_email on accounts (lower(email));

create table api_keys (
  id                 bigint primary key,
  account_id         bigint not null,
  name               text not null,
  key_hash           text not null unique,
  key_prefix         text not null,
  permission         text not null,
  monthly_cap_micros bigint,
  expires_at         timestamptz,
  revoked_at         timestamptz,
  created_at         timestamptz not null
);
create index api_keys_account on api_keys (account_id);

-- Month-to-date spend per key, fed by settled charges (and in-flight holds)
-- once billing lands; read by GET /me and by the spend-cap check's auditor.
create table key_monthly_spend (
  key_id         bigint not null,
  month          date   not null,
  settled_micros bigint not null default 0,
  held_micros    bigint not null default 0,
  primary key (key_id, month)
);

-- Asynchronous projection: the wallet ledger, one row per money event with
-- the running balance, keyed by the event's position so that applying an
-- event twice is impossible rather than merely unlikely.
create table wallet_ledger (
  event_position       bigint primary key,
  account_id           bigint not null,
  kind                 text   not null,
  amount_micros        bigint not null,
  balance_after_micros bigint not null,
  recorded_at          timestamptz not null
);
create index wallet_ledger_account on wallet_ledger (account_id, event_position);
