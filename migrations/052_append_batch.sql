-- Group commit: the appends of many commands in one transaction.
--
-- With 32 writers each committing its own single-event transaction, the cost
-- of an append is mostly the transaction around it (BEGIN, COMMIT and their
-- round trips), not the row. eventstore/group_commit.cpp queues the appends
-- of concurrent commands and a leader writes a whole queue with this function
-- in one transaction. Each command's appends form a unit (the elements of the
-- arrays that share a unit number, consecutive), and a unit is all or nothing:
--   1. transaction-scoped advisory locks on every stream of every unit
--      (sorted, so no deadlock with other appenders, which also lock in sorted
--      order), taken before this transaction has an xid, exactly as
--      scribe_append does, so (tx, position) order agrees with version order;
--   2. every stream's current version, read once after the locks;
--   3. per unit, in order: every stream's expected-version check (-2 any,
--      -1 no stream, n the current version) against those versions advanced
--      by the units accepted before it; a unit that fails writes nothing and
--      returns one row (unit, ok = false), and the units after it go on;
--   4. one INSERT of the accepted units' events, in input order, returning
--      one row (unit, ok = true, ...) per event in that order.
-- A unit that fails its check never costs the others their append, and no
-- position is drawn for it. The checks and the insert are set-based: a
-- probe and an insert per unit cost more than the transaction they saved.
create function scribe_append_batch(p_unit int[], p_stream text[], p_expected bigint[], p_events text[])
returns table (unit int, ok boolean, version bigint, "position" bigint, tx xid8, recorded_at timestamptz)
language plpgsql as $$
#variable_conflict use_column
declare
  n int := coalesce(array_length(p_stream, 1), 0);
  evs jsonb[];
  counts int[];
  starts bigint[];
  included boolean[];
  names text[];
  versions bigint[];
  failed int[] := '{}';
  i int := 1;
  j int;
  k int;
  p int;
  bad boolean;
  s text;
begin
  if pg_current_xact_id_if_assigned() is not null then
    raise exception 'scribe_append must be the first write of its transaction'
      using errcode = 'SC002';
  end if;
  for s in select distinct x from unnest(p_stream) x order by 1 loop
    perform pg_advisory_xact_lock(hashtextextended('stream:' || s, 0));
  end loop;
  -- Every stream's current version in one statement, after the locks.
  select array_agg(d.s), array_agg(coalesce((select max(e.version) from events e where e.stream_id = d.s), 0))
    into names, versions
    from (select distinct x as s from unnest(p_stream) x) d;
  select array_agg(x::jsonb order by o), array_agg(jsonb_array_length(x::jsonb) order by o)
    into evs, counts
    from unnest(p_events) with ordinality as t(x, o);
  starts := array_fill(0::bigint, array[greatest(n, 1)]);
  included := array_fill(false, array[greatest(n, 1)]);
  while i <= n loop
    j := i;
    while j < n and p_unit[j + 1] = p_unit[i] loop
      j := j + 1;
    end loop;
    bad := false;
    for k in i..j loop
      p := array_position(names, p_stream[k]);
      if (p_expected[k] = -1 and versions[p] <> 0) or (p_expected[k] >= 0 and versions[p] <> p_expected[k]) then
        bad := true;
      end if;
    end loop;
    if bad then
      failed := failed || p_unit[i];
    else
      for k in i..j loop
        p := array_position(names, p_stream[k]);
        starts[k] := versions[p];
        versions[p] := versions[p] + counts[k];
        included[k] := true;
      end loop;
    end if;
    i := j + 1;
  end loop;
  return query select f, false, null::bigint, null::bigint, null::xid8, null::timestamptz from unnest(failed) f;
  return query
    with rows as (
      select k, p_unit[k] as u, p_stream[k] as s, starts[k] + x.ord as v, x.e
      from generate_subscripts(p_stream, 1) k, jsonb_array_elements(evs[k]) with ordinality as x(e, ord)
      where included[k]
    ), ins as (
      insert into events as ev (stream_id, version, type, data, metadata)
      select r.s, r.v, r.e->>'type', r.e->'data', coalesce(r.e->'metadata', '{}'::jsonb)
      from rows r order by r.k, r.v
      returning ev.stream_id, ev.version, ev.position, ev.tx, ev.recorded_at
    )
    select r.u, true, ins.version, ins.position, ins.tx, ins.recorded_at
    from ins join rows r on r.s = ins.stream_id and r.v = ins.version
    order by r.k, r.v;
end;
$$;
