-- MCP 2025-11-25 sessions (api/mcp/mcp_sessions.cpp). Operational state, not
-- events: a session only carries what the protocol negotiated. Kept in the
-- database so that a session survives a restart of the server and is the same
-- on every server process; bound to the principal that opened it (an API key,
-- or a user and OAuth client), so another caller presenting its id finds
-- nothing. A DELETE ends it; ended sessions answer 404 and are removed
-- after a day.
create table mcp_sessions (
  id               text primary key,
  principal        text not null,
  protocol_version text not null,
  log_level        text,
  created_at       timestamptz not null default now(),
  last_seen_at     timestamptz not null default now(),
  ended_at         timestamptz
);
create index mcp_sessions_ended on mcp_sessions (ended_at) where ended_at is not null;
