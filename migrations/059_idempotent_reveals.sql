-- Stored idempotent responses that quote a saved Q&A entry (the 200 of POST
-- .../ask and POST /api/v1/ask). `reveals` names the event stream whose text
-- the stored body holds (`qna-<id>`). It is written in the transaction that
-- appends that stream (api/idempotency.h, Idempotency::finish with a
-- transaction), so whatever redacts the stream later finds the stored copy
-- and redacts it in its own transaction (commands/ask_commands.cpp): a
-- replay never brings back text its owner deleted.
alter table idempotency_keys add column reveals text;
create index idempotency_keys_reveals on idempotency_keys (reveals) where reveals is not null;
