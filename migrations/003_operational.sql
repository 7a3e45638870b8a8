-- Operational state that is not a domain fact and so is not event-sourced:
-- the request-rate limiter and the idempotency cache. Both are shared by every
-- `scribe serve` process on the database.

-- Generic cell rate algorithm: one row per bucket holding the theoretical
-- arrival time. Returns 0 when the request is allowed, otherwise the number of
-- milliseconds until it would be.
create unlogged table rate_limits (
  bucket text primary key,
  tat    timestamptz not null
);

create function scribe_rate_limit_take(p_bucket text, p_limit int, p_window_ms bigint)
returns bigint language plpgsql as $$
declare
  t_now timestamptz := clock_timestamp();
  interval_ms double precision := p_window_ms::double precision / p_limit;
  old_tat timestamptz;
  new_tat timestamptz;
begin
  -- The bucket table is unlogged and losing a moment of counting in a crash is
  -- harmless, so the transaction does not wait for a WAL flush.
  perform set_config('synchronous_commit', 'off', true);
  insert into rate_limits(bucket, tat) values (p_bucket, t_now)
    on conflict (bucket) do nothing;
  select tat into old_tat from rate_limits where bucket = p_bucket for update;
  new_tat := greatest(old_tat, t_now) + make_interval(secs => interval_ms / 1000.0);
  if new_tat - t_now > make_interval(secs => p_window_ms / 1000.0) then
    return ceil(extract(epoch from (new_tat - t_now)) * 1000 - p_window_ms)::bigint;
  end if;
  update rate_limits set tat = new_tat where bucket = p_bucket;
  return 0;
end;
$$;

create table idempotency_keys (
  principal        text not null,
  key              text not null,
  method           text not null,
  path             text not null,
  body_hash        text not null,
  created_at       timestamptz not null default now(),
  completed_at     timestamptz,
  response_status  int,
  response_headers jsonb,
  response_body    text,
  primary key (principal, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);
