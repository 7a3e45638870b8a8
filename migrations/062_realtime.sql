-- Realtime sessions (issue 32; domain/realtime.h).
--
-- realtime_sessions: the read model of the sessions, written by the realtime
-- projection (projections/realtime_projection.cpp) from the account stream's
-- RealtimeSession* events; rebuilt from the log like any other.
create table realtime_sessions (
  id               text primary key,
  account_id       bigint not null,
  key_id           bigint,
  transcription_id bigint not null,
  language         text not null,
  cap_minutes      int not null,
  hold_id          text,
  status           text not null,  -- live | ending | ended
  created_at       timestamptz not null,
  ended_at         timestamptz,
  end_reason       text,
  audio_seconds    bigint,
  charge_micros    bigint
);
create index realtime_sessions_account on realtime_sessions (account_id, created_at);
create index realtime_sessions_open on realtime_sessions (status) where status <> 'ended';

-- Who may start sessions (projection-written): a key (key_id), or the
-- account itself for the first-party console's sign-in (key_id 0).
create table realtime_grants (
  account_id bigint not null,
  key_id     bigint not null,
  granted_at timestamptz not null,
  primary key (account_id, key_id)
);

-- Operational state of a live session, written by the commands
-- (commands/realtime_commands.cpp) like job_leases, never from the log:
-- the current ticket (only its SHA-256), the connection that owns the
-- session (a resume bumps `generation`, so the old connection sees it is
-- stale), its heartbeat, and how much audio is persisted.
create table realtime_live (
  session_id        text primary key,
  account_id        bigint not null,
  ticket_hash       bytea,
  ticket_expires_at timestamptz,
  ticket_used_at    timestamptz,
  generation        int not null default 0,
  owner             text,
  heartbeat_at      timestamptz not null,
  samples_persisted bigint not null default 0,
  last_turn_order   int not null default 0,
  end_requested_at  timestamptz,
  ended_at          timestamptz
);
create unique index realtime_live_ticket on realtime_live (ticket_hash) where ticket_hash is not null;
create index realtime_live_heartbeat on realtime_live (heartbeat_at) where ended_at is null;

-- The persisted audio: one object per piece (realtime/<sid>/<seq 8 digits>.pcm),
-- a row per piece written in the statement that advances samples_persisted.
create table realtime_audio_pieces (
  session_id   text not null,
  seq          bigint not null,
  start_sample bigint not null,
  samples      bigint not null,
  generation   int not null,  -- the connection that persisted it (its object's key)
  primary key (session_id, seq)
);

-- Final turns as sent, replayed after a resume.
create table realtime_turns (
  session_id text not null,
  turn_order int not null,
  payload    jsonb not null,
  primary key (session_id, turn_order)
);
