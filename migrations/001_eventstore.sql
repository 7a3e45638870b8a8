-- The event store: an append-only log in one global order.
--
-- Global order is (tx, position). `tx` is the appending transaction's id; a
-- reader only reads events whose tx is below pg_snapshot_xmin of its snapshot,
-- i.e. transactions that can no longer commit. Every transaction still able to
-- commit has tx >= that bound, so nothing can ever appear behind a reader's
-- checkpoint (see eventstore/event_store.cpp for the argument in full).
create table events (
  position    bigserial   not null,
  tx          xid8        not null default pg_current_xact_id(),
  stream_id   text        not null,
  version     bigint      not null,
  type        text        not null,
  data        jsonb       not null,
  metadata    jsonb       not null default '{}'::jsonb,
  recorded_at timestamptz not null default now(),
  redacted_at timestamptz,
  primary key (position),
  unique (stream_id, version)
);
create index events_global_order on events (tx, position);

-- Appends go through this one function so that the stream lock, the version
-- check and the insert happen in one round trip, in this order:
--   1. transaction-scoped advisory locks on every stream (sorted, so no deadlock),
--      taken before this transaction has an xid; appends to one stream therefore
--      get increasing xids, and (tx, position) order agrees with version order;
--   2. the expected-version check (before any position is drawn);
--   3. the insert.
-- appends: [{"stream": "...", "expected": -2|-1|n, "events": [{"type", "data", "metadata"}]}]
-- expected: -2 any, -1 the stream must not exist, n >= 1 the stream's current version.
create function scribe_append(appends jsonb)
returns table (stream_id text, version bigint, "position" bigint, tx xid8)
language plpgsql as $$
#variable_conflict use_column
declare
  a jsonb;
  s text;
  current_version bigint;
  expected bigint;
  start_version bigint;
begin
  if pg_current_xact_id_if_assigned() is not null then
    raise exception 'scribe_append must be the first write of its transaction'
      using errcode = 'SC002';
  end if;
  for s in select distinct x->>'stream' from jsonb_array_elements(appends) x order by 1 loop
    perform pg_advisory_xact_lock(hashtextextended('stream:' || s, 0));
  end loop;
  for a in select value from jsonb_array_elements(appends) loop
    s := a->>'stream';
    expected := (a->>'expected')::bigint;
    select coalesce(max(e.version), 0) into current_version from events e where e.stream_id = s;
    if expected = -1 and current_version <> 0 then
      raise exception 'stream % already exists at version %', s, current_version
        using errcode = 'SC001';
    elsif expected >= 0 and current_version <> expected then
      raise exception 'stream % is at version %, expected %', s, current_version, expected
        using errcode = 'SC001';
    end if;
    start_version := current_version + 1;
    return query
      insert into events as ev (stream_id, version, type, data, metadata)
      select s, start_version + x.ord - 1, x.e->>'type', x.e->'data', coalesce(x.e->'metadata', '{}'::jsonb)
      from jsonb_array_elements(a->'events') with ordinality as x(e, ord)
      order by x.ord
      returning ev.stream_id, ev.version, ev.position, ev.tx;
  end loop;
end;
$$;

-- Subscribers LISTEN on scribe_events; NOTIFY is delivered at commit.
create function scribe_events_notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('scribe_events', '');
  return null;
end;
$$;
create trigger events_notify after insert on events
  for each statement execute function scribe_events_notify();

-- Events are immutable. The one exception is redaction (transcription deletion),
-- which sets scribe.redaction = 'on' for its transaction and may only replace
-- `data` and set `redacted_at`; deleting or truncating is never allowed.
create function scribe_events_guard() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' and current_setting('scribe.redaction', true) = 'on'
     and new.position = old.position and new.tx = old.tx and new.stream_id = old.stream_id
     and new.version = old.version and new.type = old.type and new.recorded_at = old.recorded_at
     and new.redacted_at is not null then
    return new;
  end if;
  raise exception 'events are append-only (% refused)', tg_op using errcode = 'SC003';
end;
$$;
create trigger events_immutable before update or delete on events
  for each row execute function scribe_events_guard();
create trigger events_no_truncate before truncate on events
  for each statement execute function scribe_events_guard();
