-- Redaction may replace an event's data, never its metadata (who appended it,
-- under which request): 001's guard forgot to pin metadata.
create or replace function scribe_events_guard() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' and current_setting('scribe.redaction', true) = 'on'
     and new.position = old.position and new.tx = old.tx and new.stream_id = old.stream_id
     and new.version = old.version and new.type = old.type and new.recorded_at = old.recorded_at
     and new.metadata = old.metadata
     and new.redacted_at is not null then
    return new;
  end if;
  raise exception 'events are append-only (% refused)', tg_op using errcode = 'SC003';
end;
$$;
