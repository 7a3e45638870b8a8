-- GET /me shows what the wallet can still pay for: the balance minus the
-- holds of work in flight. The accounts projection keeps the open holds'
-- total and count beside the balance; existing rows are filled from the log.
alter table accounts
  add column held_micros bigint not null default 0,
  add column open_holds  integer not null default 0;

update accounts a set held_micros = x.held, open_holds = x.n
from (
  select (data->>'account_id')::bigint as id,
         sum(case type
               when 'WalletHoldPlaced' then (data->>'amount_micros')::bigint
               when 'WalletHoldSettled' then -((data->>'charged_micros')::bigint + (data->>'released_micros')::bigint)
               else -(data->>'amount_micros')::bigint
             end) as held,
         sum(case type when 'WalletHoldPlaced' then 1 else -1 end) as n
  from events
  where type in ('WalletHoldPlaced', 'WalletHoldSettled', 'WalletHoldReleased')
  group by 1
) x
where x.id = a.id;
