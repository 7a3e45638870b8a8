-- OAuth 2.1 (issue 31; the shared plan is in api/openapi.yaml under "OAuth"
-- and docs/oauth_wire_rules.md). Two kinds of rows:
--
-- Read models of events, written inline by projections/oauth_projection.cpp:
-- clients (DCR registrations and fetched CIMD clients; the built-in console
-- client `scribe-console` has no row), grants (one per authorization that
-- reached the token endpoint) and remembered consents.
--
-- Operational state (secrets stored hashed, SHA-256 hex, never plaintext):
-- passwords, browser sessions of the /oauth pages, fetched client metadata
-- documents, authorization codes, tokens, and failed sign-ins. Tokens are
-- not events: an access token is checked on every request, and a row per
-- token with its hash is what verification reads (joined with its grant, so
-- revoking the grant ends every token of it at once on every process).

create sequence oauth_grant_ids start 1;

create table oauth_clients (
  client_id        text primary key,
  kind             text not null check (kind in ('dcr', 'cimd', 'first_party')),
  client_name      text,
  redirect_uris    jsonb not null,
  application_type text not null default 'web',
  registered_at    timestamptz not null,
  last_used_at     timestamptz,
  deleted_at       timestamptz
);
create index oauth_clients_unused on oauth_clients (coalesce(last_used_at, registered_at)) where deleted_at is null;

create table oauth_grants (
  id         bigint primary key,
  account_id bigint not null,
  client_id  text   not null,
  resources  text[] not null,
  created_at timestamptz not null,
  revoked_at timestamptz
);
create index oauth_grants_account on oauth_grants (account_id, client_id);

create table oauth_consents (
  account_id bigint not null,
  client_id  text   not null,
  granted_at timestamptz not null,
  primary key (account_id, client_id)
);

-- Operational.
create table user_credentials (
  account_id    bigint primary key,
  password_hash text not null,  -- scrypt$<log2 N>$<r>$<p>$<b64 salt>$<b64 hash>
  updated_at    timestamptz not null default now()
);

create table oauth_browser_sessions (
  session_hash text primary key,
  account_id   bigint not null,
  created_at   timestamptz not null default now(),
  expires_at   timestamptz not null
);
create index oauth_browser_sessions_expires on oauth_browser_sessions (expires_at);

create table oauth_client_documents (
  url        text primary key,
  document   jsonb not null,
  fetched_at timestamptz not null default now(),
  expires_at timestamptz not null
);

create table oauth_codes (
  code_hash      text primary key,
  grant_id       bigint not null,
  account_id     bigint not null,
  client_id      text   not null,
  redirect_uri   text   not null,
  code_challenge text   not null,
  resources      text[] not null,
  expires_at     timestamptz not null,
  used_at        timestamptz
);
create index oauth_codes_expires on oauth_codes (expires_at);

create table oauth_tokens (
  token_hash  text primary key,
  kind        text   not null check (kind in ('access', 'refresh')),
  grant_id    bigint not null,
  account_id  bigint not null,
  client_id   text   not null,
  resources   text[] not null,
  created_at  timestamptz not null default now(),
  expires_at  timestamptz not null,
  revoked_at  timestamptz,
  -- A refresh token that was exchanged: when (the grace of a concurrent
  -- retry runs from here). The pair issued by an exchange names the refresh
  -- token it came from in parent_hash.
  rotated_at  timestamptz,
  parent_hash text
);
create index oauth_tokens_grant on oauth_tokens (grant_id);
create index oauth_tokens_parent on oauth_tokens (parent_hash) where parent_hash is not null;
create index oauth_tokens_expires on oauth_tokens (expires_at);

-- Failed sign-ins on the /oauth pages, one row each, keyed by the client
-- address ("addr:<ip>") and by the email ("email:<lower email>"); counted in a
-- window (domain/limits.h) and swept after it.
create table oauth_sign_in_failures (
  bucket    text not null,
  failed_at timestamptz not null default now()
);
create index oauth_sign_in_failures_bucket on oauth_sign_in_failures (bucket, failed_at);
